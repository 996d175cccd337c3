"""The app's runtime session serves the local endpoint when ``endpoint.enabled`` is on:
other clients' calls are approved through the app's Prompter, and ``portico mcp call``
uses the app's live connection; with the setting off nothing listens."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import subprocess
import sys

import pytest

from portico.paths import paths
from portico.prompts import ApprovalAnswer, ApprovalChoice, Caller
from portico.ui.bridge import EventBridge
from portico.ui.facade import RuntimeThread
from portico.ui.runtime_thread.session import RuntimeSession
from tests.gateway.helpers import sdk_client, texts
from tests.helpers.person import ScriptedPerson
from tests.helpers.servers import TOOLBOX
from tests.ui.pages_helpers import write_global

pytestmark = pytest.mark.slow  # real servers, a real endpoint, a CLI process


def config(enabled: bool) -> None:
    command = json.dumps([sys.executable, str(TOOLBOX), "stdio"])
    write_global(f"defer_tools = 1000\n\n[mcp.tb]\ncommand = {command}\n")
    paths().global_yaml.write_text(f"endpoint:\n  enabled: {'true' if enabled else 'false'}\n")


def cli_call() -> subprocess.CompletedProcess[str]:
    args = ["mcp", "call", "tb", "echo", "--args", '{"text": "from the cli"}', "-v"]
    return subprocess.run(
        [sys.executable, "-m", "portico.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ},
        check=False,
    )


async def test_the_app_serves_its_servers_to_clients_and_the_cli(runtime: RuntimeThread) -> None:
    config(enabled=True)
    person = ScriptedPerson(approve_tool=[ApprovalAnswer(ApprovalChoice.ONCE)])
    session = await runtime.submit(RuntimeSession.create(person, EventBridge()))
    try:
        await runtime.submit(session.load(None))
        await runtime.submit(session.apply())
        endpoint = session.endpoint
        assert endpoint is not None
        found = paths().state_dir / "endpoint.json"
        assert stat.S_IMODE(found.stat().st_mode) == 0o600
        token = endpoint.book.add_ephemeral("claude-code")
        async with sdk_client(endpoint.url, token) as client:
            result = await client.call_tool("tb__echo", {"text": "from a client"})
        out = await asyncio.to_thread(cli_call)
    finally:
        await runtime.shutdown(session.close)
    assert texts(result) == "echo: from a client"
    [request] = person.requests("approve_tool")
    assert request.caller == Caller("client", "claude-code")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "echo: from the cli"
    assert "via the running Portico" in out.stderr
    assert not found.exists()  # quitting removes it


async def test_with_the_setting_off_nothing_listens(runtime: RuntimeThread) -> None:
    config(enabled=False)
    session = await runtime.submit(RuntimeSession.create(ScriptedPerson(), EventBridge()))
    try:
        await runtime.submit(session.load(None))
        await runtime.submit(session.apply())
        assert session.endpoint is None
        assert not (paths().state_dir / "endpoint.json").exists()
    finally:
        await runtime.shutdown(session.close)
