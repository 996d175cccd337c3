"""runtime/url_elicitation.py without a server: finding -32042 in a failure's causes."""

from __future__ import annotations

from mcp import MCPError
from mcp.shared.exceptions import UrlElicitationRequiredError
from mcp_types import ElicitRequestURLParams

from portico.runtime.errors import RuntimeFailure
from portico.runtime.url_elicitation import required


def test_the_elicitations_are_found_behind_a_reworded_failure() -> None:
    asked = UrlElicitationRequiredError(
        [ElicitRequestURLParams(message="m", url="https://h/x", elicitation_id="e")]
    )
    wire = MCPError(code=asked.error.code, message=asked.error.message, data=asked.error.data)
    outer = RuntimeFailure("srv: tools/call t: reworded")
    outer.__cause__ = wire
    [found] = required(outer) or []
    assert found.url == "https://h/x" and found.elicitation_id == "e"


def test_a_cause_chain_that_loops_ends_the_search() -> None:
    """A task's failure re-raised from itself (runtime/tasks.py) hung the call."""
    error = MCPError(code=-32603, message="the worker crashed")
    error.__cause__ = error
    assert required(error) is None
