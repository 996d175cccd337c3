"""The local endpoint against the MCP Python SDK's own client: one hub's servers as one
server, every call through the ToolGuard, each client with its own token."""

from __future__ import annotations

import asyncio
import os
import signal
import sys

import httpx2
import pytest

from portico.config.model import TrustLevel
from portico.prompts import ApprovalAnswer, ApprovalChoice, Caller
from tests.gateway.helpers import ACCEPT, INITIALIZE, sdk_client, serving, texts
from tests.helpers.keyrings import MemoryKeyring
from tests.helpers.person import ScriptedPerson
from tests.helpers.servers import SERVERS
from tests.helpers.specs import make_spec, toolbox_spec

pytestmark = pytest.mark.slow  # real servers and a real endpoint

TINY = SERVERS / "tiny.py"


def tiny_spec(name: str) -> object:
    return make_spec(
        name,
        "stdio",
        command=sys.executable,
        args=(str(TINY), "--name", name),
        trust=TrustLevel.FULL,
    )


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_call_is_approved_by_the_person_with_its_exact_arguments_naming_the_client(
    memory_keyring: MemoryKeyring, mode: str
) -> None:
    person = ScriptedPerson(approve_tool=[ApprovalAnswer(ApprovalChoice.ONCE)])
    async with serving(person, toolbox_spec("tb")) as running:
        token = await running.endpoint.book.add("claude-code")
        async with sdk_client(running.url, token, mode=mode) as client:
            names = [t.name for t in (await client.list_tools()).tools]
            assert "tb__echo" in names and "tb__add" in names
            assert "tb__list_resources" not in names  # a Portico utility: resources are native here
            result = await client.call_tool("tb__echo", {"text": "hi there"})
        backend = running.hub.connection("tb").activity.snapshot()
    assert texts(result) == "echo: hi there" and not result.is_error
    # the backend server's Activity names the client that asked
    assert [e.caller for e in backend if e.method == "tools/call"] == ["client claude-code"]
    [request] = person.requests("approve_tool")
    assert request.caller == Caller("client", "claude-code")
    assert request.arguments == {"text": "hi there"}
    assert request.qualified_name == "tb__echo"
    calls = [
        e
        for e in running.endpoint.gateway.activity.entries("claude-code")
        if e.method == "tools/call"
    ]
    assert [(c.target, c.outcome) for c in calls] == [("tb__echo", "ok")]


async def test_a_denied_call_is_a_tool_error_and_never_reaches_the_server(
    memory_keyring: MemoryKeyring,
) -> None:
    person = ScriptedPerson(approve_tool=[ApprovalAnswer(ApprovalChoice.DENY)])
    async with serving(person, toolbox_spec("tb")) as running:
        token = running.endpoint.book.add_ephemeral("cursor")
        async with sdk_client(running.url, token) as client:
            result = await client.call_tool("tb__add", {"a": 1, "b": 2})
        sent = [e.method for e in running.hub.connection("tb").activity.snapshot()]
    assert result.is_error and "denied" in texts(result)
    assert "tools/call" not in sent
    assert running.endpoint.gateway.activity.entries("cursor")[-1].outcome == "denied"


async def test_no_token_or_an_unknown_one_is_401_and_recorded(
    memory_keyring: MemoryKeyring,
) -> None:
    async with serving(ScriptedPerson(), toolbox_spec("tb", trust=TrustLevel.FULL)) as running:
        running.endpoint.book.add_ephemeral("real")
        async with httpx2.AsyncClient() as http:
            bare = await http.post(running.url, json=INITIALIZE, headers=ACCEPT)
            forged = await http.post(
                running.url, json=INITIALIZE, headers={**ACCEPT, "Authorization": "Bearer pgw_nope"}
            )
        with pytest.raises(Exception):  # noqa: B017 - the SDK's own error for a 401
            async with sdk_client(running.url, None) as client:
                await client.list_tools()
        refused = running.endpoint.gateway.activity.entries("(unknown)")
    assert bare.status_code == 401 and forged.status_code == 401
    assert bare.headers["www-authenticate"].startswith("Bearer")
    assert "portico connect" in bare.json()["error"]
    outcomes = [e.outcome for e in refused]
    assert "refused 401: no bearer token" in outcomes and "refused 401: unknown token" in outcomes


async def test_a_foreign_origin_is_403_even_with_a_good_token(
    memory_keyring: MemoryKeyring,
) -> None:
    async with serving(ScriptedPerson(), toolbox_spec("tb", trust=TrustLevel.FULL)) as running:
        token = await running.endpoint.book.add("inspector", ("http://localhost:6274",))
        other = await running.endpoint.book.add("claude-code")
        auth = {**ACCEPT, "Authorization": f"Bearer {token}"}
        async with httpx2.AsyncClient() as http:
            evil = await http.post(
                running.url, json=INITIALIZE, headers={**auth, "Origin": "http://evil.example"}
            )
            own = await http.post(
                running.url, json=INITIALIZE, headers={**auth, "Origin": "http://localhost:6274"}
            )
            borrowed = await http.post(
                running.url,
                json=INITIALIZE,
                headers={
                    **ACCEPT,
                    "Authorization": f"Bearer {other}",
                    "Origin": "http://localhost:6274",
                },
            )
            rebound = await http.post(
                running.url, json=INITIALIZE, headers={**auth, "Host": "attacker.example:80"}
            )
    assert evil.status_code == 403
    assert own.status_code == 200
    assert borrowed.status_code == 403  # an Origin allowed for another client only
    assert rebound.status_code == 421
    outcomes = [e.outcome for e in running.endpoint.gateway.activity.entries()]
    assert any(o.startswith("refused 403: Origin 'http://evil.example'") for o in outcomes)


async def test_resources_and_prompts_of_the_servers(memory_keyring: MemoryKeyring) -> None:
    async with serving(ScriptedPerson(), toolbox_spec("tb")) as running:
        token = running.endpoint.book.add_ephemeral("goose")
        async with sdk_client(running.url, token) as client:
            resources = (await client.list_resources()).resources
            read = await client.read_resource("toolbox://readme")
            prompts = (await client.list_prompts()).prompts
            prompt = await client.get_prompt("tb__greet", {"name": "Ada"})
    assert [str(r.uri) for r in resources] == ["toolbox://readme"]
    assert read.contents and getattr(read.contents[0], "text", "")
    assert [p.name for p in prompts] == ["tb__greet"]
    assert "Ada" in str(prompt.messages[0].content)


async def test_tool_search_loads_tools_for_that_client(memory_keyring: MemoryKeyring) -> None:
    spec = toolbox_spec("tb", trust=TrustLevel.FULL)
    async with serving(ScriptedPerson(), spec, defer_tools=0) as running:
        token = running.endpoint.book.add_ephemeral("vscode")
        async with sdk_client(running.url, token, mode="legacy") as client:
            before = [t.name for t in (await client.list_tools()).tools]
            found = await client.call_tool("tool_search", {"query": "echo text back"})
            after = [t.name for t in (await client.list_tools(cache_mode="refresh")).tools]
            echoed = await client.call_tool("tb__echo", {"text": "x"})
    assert before == ["tool_search"]
    assert "tb__echo" in texts(found)
    assert "tb__echo" in after and "tool_search" in after
    assert texts(echoed) == "echo: x"


async def test_a_backend_killed_mid_call_is_a_clean_error_and_the_others_keep_working(
    memory_keyring: MemoryKeyring, allow_logs: object
) -> None:
    allow_logs(r"tb")  # type: ignore[operator]  # the server's death is logged
    specs = (toolbox_spec("tb", trust=TrustLevel.FULL), tiny_spec("other"))
    async with serving(ScriptedPerson(), *specs) as running:
        token = running.endpoint.book.add_ephemeral("claude-desktop")
        async with sdk_client(running.url, token) as client:
            hanging = asyncio.create_task(client.call_tool("tb__hang", {}))
            pid = running.hub.connection("tb").pid
            assert pid is not None
            for _ in range(200):  # the call is under way
                if any(
                    e.method == "tools/call"
                    for e in running.hub.connection("tb").activity.snapshot()
                ):
                    break
                await asyncio.sleep(0.02)
            os.kill(pid, signal.SIGKILL)
            result = await asyncio.wait_for(hanging, 30)
            other = await client.call_tool("other__echo", {"text": "still here"})
            listed = [t.name for t in (await client.list_tools(cache_mode="refresh")).tools]
    assert result.is_error and "tb__hang" in texts(result)
    assert texts(other) == "still here" and not other.is_error
    assert "other__echo" in listed


async def test_a_token_revoked_in_another_process_stops_working_at_once(
    memory_keyring: MemoryKeyring,
) -> None:
    """`portico clients remove NAME` in a terminal while the app serves: the running
    endpoint must refuse the old token on its next request, not when it next re-reads."""
    from portico.gateway.clients import ClientBook

    async with serving(ScriptedPerson(), toolbox_spec("tb", trust=TrustLevel.FULL)) as running:
        book = running.endpoint.book
        token = await book.add("editor-x")
        headers = {**ACCEPT, "Authorization": f"Bearer {token}"}
        async with httpx2.AsyncClient() as http:
            before = await http.post(running.url, json=INITIALIZE, headers=headers)
            other = ClientBook(book.secrets, book.path)  # the terminal's own process
            await other.load()
            assert await other.remove("editor-x")
            after = await http.post(running.url, json=INITIALIZE, headers=headers)
    assert before.status_code == 200
    assert after.status_code == 401
