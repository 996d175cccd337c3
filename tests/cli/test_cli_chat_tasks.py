"""``portico chat`` with a tool call the server answers with a task (tests/servers/tasking.py
over stdio): the terminal shows the task's status changes and the model gets the task's
result."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from portico.paths import paths
from tests.cli.test_cli_chat import run
from tests.helpers.servers import TASKING
from tests.servers.model_server import ModelServer, text, tool_call

pytestmark = pytest.mark.slow  # real processes


@pytest.fixture(scope="module")
def server() -> Iterator[ModelServer]:
    with ModelServer() as running:
        yield running


@pytest.fixture
def configured(portico_home: Path, server: ModelServer) -> ModelServer:
    folder = paths().global_toml.parent
    folder.mkdir(parents=True, exist_ok=True)
    python = json.dumps(__import__("sys").executable)
    (folder / "mcp.toml").write_text(
        f'[mcp.tasking]\ncommand = {python}\nargs = [{json.dumps(str(TASKING))}, "stdio"]\n'
    )
    (folder / "config.yaml").write_text(
        "models:\n  providers:\n    scripted:\n      kind: openai\n"
        f"      base_url: {server.openai_url}\n"
        '      api_key: "${env:SCRIPTED_KEY}"\n      models: [gpt-test]\n'
        "  default: scripted/gpt-test\n"
    )
    return server


def test_chat_shows_a_tasks_status_and_the_model_gets_its_result(configured: ModelServer) -> None:
    configured.script(
        tool_call("tasking__slow_compute", {"seconds": 0.4, "steps": 2}), text("Done: 2 steps.")
    )
    out = run("chat", "-q", "compute", env={"SCRIPTED_KEY": "k"})
    assert out.returncode == 0, out.stderr
    assert out.stdout == "Done: 2 steps.\n"
    states = re.findall(r"^  task \S+: (.+)$", out.stderr, re.MULTILINE)
    assert states == ["working", "completed"], out.stderr
    assert "task working… — step 1 of 2" in out.stderr
    told = next(m for m in configured.requests[1].body["messages"] if m["role"] == "tool")
    assert told["content"] == "computed 2 steps"
