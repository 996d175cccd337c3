from __future__ import annotations

import pytest

from portico.runtime.summary import PassSummary, short_error

CASES = [
    (PassSummary(), "MCP: registered 0 tool(s) from 0 server(s)"),
    (PassSummary(tools=116, servers=4), "MCP: registered 116 tool(s) from 4 server(s)"),
    (
        PassSummary(
            tools=116,
            servers=4,
            failed=[
                ("github", "Connection closed"),
                ("notion", "HTTP 401 from POST https://mcp.notion.com/mcp"),
            ],
        ),
        "MCP: registered 116 tool(s) from 4 server(s) (2 failed: github (Connection closed); "
        "notion (HTTP 401 from POST https://mcp.notion.com/mcp))",
    ),
    (
        PassSummary(tools=12, servers=3, lazy=2),
        "MCP: registered 12 tool(s) from 3 server(s) (2 lazy, not spawned yet)",
    ),
    (
        PassSummary(tools=5, servers=1, cooldown=["slack"]),
        "MCP: registered 5 tool(s) from 1 server(s) (1 not attempted (in retry cooldown): slack)",
    ),
    (
        PassSummary(
            tools=9,
            servers=3,
            lazy=1,
            connecting=["slow"],
            awaiting_trust=["proj"],
            needs_auth=["notion", "linear"],
            cooldown=["slack"],
            failed=[("gh", "gh: Connection closed; last stderr lines:\nboom")],
        ),
        "MCP: registered 9 tool(s) from 3 server(s) (1 lazy, not spawned yet; "
        "1 still connecting: slow; 1 awaiting trust: proj; 2 needs sign-in: notion, linear; "
        "1 not attempted (in retry cooldown): slack; 1 failed: gh (Connection closed))",
    ),
]


@pytest.mark.parametrize(("summary", "expected"), CASES)
def test_summary_grammar(summary: PassSummary, expected: str) -> None:
    assert summary.line() == expected


def test_long_errors_are_cut() -> None:
    cut = short_error("x" * 500)
    assert len(cut) == 160 and cut.endswith("…")
    assert short_error("") == "unknown error"
