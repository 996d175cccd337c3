"""The MCP Inspector CLI (tests/peers, 0.15.0) against the endpoint: it lists and calls
(the call approved by the person in Portico, naming the client), and without the token
it is refused with 401.

The Inspector CLI 0.15.0 has no option for a request header, so the token reaches it the
way a reverse proxy in front of the endpoint would add it: peers/with_token.cjs, preloaded
into its Node process, puts ``Authorization: Bearer`` on every request it sends.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from portico.prompts import ApprovalAnswer, ApprovalChoice, Caller
from tests.conformance.test_conformance import BIN
from tests.gateway.helpers import serving
from tests.helpers.person import ScriptedPerson
from tests.helpers.specs import toolbox_spec

PEERS = BIN.parent
INSPECTOR = PEERS / "@modelcontextprotocol" / "inspector-cli" / "build" / "index.js"
PRELOAD = Path(__file__).parent / "peers" / "with_token.cjs"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.npm,
    pytest.mark.usefixtures("memory_keyring"),
    pytest.mark.skipif(not INSPECTOR.exists(), reason="npm peers not installed"),
]


async def inspector(url: str, token: str | None, *args: str) -> tuple[int, str]:
    env = dict(os.environ)
    if token is not None:
        env["GATEWAY_TOKEN"] = token
        env["NODE_OPTIONS"] = f"--require {PRELOAD}"
    process = await asyncio.create_subprocess_exec(
        str(BIN / "node"),
        str(INSPECTOR),
        url,
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        env=env,
    )
    out, _ = await asyncio.wait_for(process.communicate(), 60)
    return process.returncode or 0, out.decode()


async def test_the_inspector_cli_lists_calls_and_is_refused_without_a_token() -> None:
    person = ScriptedPerson(approve_tool=[ApprovalAnswer(ApprovalChoice.ONCE)])
    async with serving(person, toolbox_spec("tb")) as running:
        token = await running.endpoint.book.add("inspector")
        code, listed = await inspector(running.url, token, "--method", "tools/list")
        assert code == 0, listed
        names = {t["name"] for t in json.loads(listed)["tools"]}
        code, called = await inspector(
            running.url,
            token,
            "--method",
            "tools/call",
            "--tool-name",
            "tb__echo",
            "--tool-arg",
            "text=from the inspector",
        )
        assert code == 0, called
        code, refused = await inspector(running.url, None, "--method", "tools/list")
    assert {"tb__echo", "tb__add"} <= names
    assert json.loads(called)["content"][0]["text"] == "echo: from the inspector"
    [request] = person.requests("approve_tool")
    assert request.caller == Caller("client", "inspector")
    assert request.arguments == {"text": "from the inspector"}
    assert code != 0 and "A client token is needed" in refused
    outcomes = [e.outcome for e in running.endpoint.gateway.activity.entries()]
    assert any(o.startswith("refused 401: no bearer token") for o in outcomes)
