"""The suite's tasks-extension *server* scenarios against tests/servers/tasking.py.

Conformance 0.2.0-alpha.12 has no client scenario for ``io.modelcontextprotocol/tasks``
(its tasks scenarios test servers), so Portico's tasks client is tested against
tests/servers/tasking.py (tests/runtime/test_tasks.py, tests/chat/test_chat_tasks.py, the
GUI tests). This checks that the peer speaks the extension as the suite expects, so those
tests mean something. Left out: tasks-mrtr-composition and tasks-required-task-error need
server behaviour the peer does not model (MRTR before a task, required-task tools);
tasks-status-notifications has no checks.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator

import pytest

from tests.conformance.test_conformance import BIN, SUITE, _env
from tests.helpers.servers import RunningServer, start_tasking, stop_server

SCENARIOS = (
    "tasks-lifecycle",
    "tasks-capability-negotiation",
    "tasks-dispatch-and-envelope",
    "tasks-mrtr-input",
    "tasks-request-headers",
    "tasks-request-state-removal",
    "tasks-wire-fields",
)

pytestmark = [
    pytest.mark.conformance,
    pytest.mark.skipif(not (BIN / "node").exists(), reason="npm peers not installed"),
]


@pytest.fixture(scope="module")
def peer() -> Iterator[RunningServer]:
    server = start_tasking()
    yield server
    stop_server(server)


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_the_tasking_peer_passes_the_suites_server_scenario(
    peer: RunningServer, scenario: str
) -> None:
    args = [str(BIN / "node"), str(SUITE / "dist" / "index.js"), "server"]
    args += ["--url", peer.url, "--scenario", scenario]
    done = subprocess.run(args, capture_output=True, text=True, env=_env(), timeout=120)
    text = re.sub(r"\x1b\[[0-9;]*m", "", done.stdout + done.stderr)
    summary = [line for line in text.splitlines() if "Passed:" in line or "FAIL" in line]
    assert done.returncode == 0 and " 0 failed" in text, "\n".join(summary)
