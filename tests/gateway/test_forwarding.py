"""What a backend server says during and between calls reaches the endpoint's client:
elicitation and sampling requests (after the person's rules), log lines, resource
updates; and a client profile limits what a client sees and may call."""

from __future__ import annotations

import asyncio
from typing import Any

import mcp_types as types
import pytest

from portico.config.model import TrustLevel
from portico.runtime.list_refresher import handshake_era
from tests.gateway.helpers import sdk_client, serving, texts
from tests.helpers.person import ScriptedPerson
from tests.helpers.servers import EVERYTHING, NODE
from tests.helpers.specs import make_spec, toolbox_spec

pytestmark = [
    pytest.mark.slow,
    pytest.mark.npm,
    pytest.mark.usefixtures("memory_keyring"),
    pytest.mark.skipif(not EVERYTHING.exists(), reason="npm peers"),
]


def everything(**fields: Any) -> Any:
    fields.setdefault("trust", TrustLevel.FULL)
    return make_spec(
        "everything", command=str(NODE), args=(str(EVERYTHING), "stdio"), timeout=30, **fields
    )


async def until(check: Any, seconds: float = 12.0) -> None:
    deadline = asyncio.get_running_loop().time() + seconds
    while not check():
        assert asyncio.get_running_loop().time() < deadline, "not in time"
        await asyncio.sleep(0.05)


async def test_a_backends_elicitation_goes_to_the_calling_client() -> None:
    mode = "legacy"
    person = ScriptedPerson()  # asked nothing: the client answers
    asked: list[str] = []

    async def elicit(context: Any, params: Any) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"name": "Ada Lovelace"})

    async with serving(person, everything()) as running:
        token = await running.endpoint.book.add("ide")
        async with sdk_client(running.url, token, mode=mode, elicitation_callback=elicit) as c:
            result = await c.call_tool("everything__trigger-elicitation-request", {})
    assert asked, "the client was not asked"
    assert "Ada Lovelace" in texts(result)
    assert person.requests("elicit") == []


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_without_a_back_channel_to_the_client_the_person_is_asked(mode: str) -> None:
    """legacy: the client declared no elicitation; auto (2026-07-28): a request has no
    back-channel, so the person answers in Portico."""
    from portico.prompts import ElicitationAnswer

    async def elicit(context: Any, params: Any) -> types.ElicitResult:
        raise AssertionError("the client was asked")

    person = ScriptedPerson(elicit=[ElicitationAnswer("decline")])
    callbacks = {"elicitation_callback": elicit} if mode == "auto" else {}
    async with serving(person, everything()) as running:
        token = await running.endpoint.book.add("ide")
        async with sdk_client(running.url, token, mode=mode, **callbacks) as client:
            await client.call_tool("everything__trigger-elicitation-request", {})
    assert len(person.requests("elicit")) == 1


async def test_elicitation_turned_off_for_the_server_never_reaches_the_client() -> None:
    from portico.config.model import ElicitationSpec

    asked: list[str] = []

    async def elicit(context: Any, params: Any) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"name": "x"})

    spec = everything(elicitation=ElicitationSpec(enabled=False))
    async with serving(ScriptedPerson(), spec) as running:
        token = await running.endpoint.book.add("ide")
        async with sdk_client(running.url, token, mode="legacy", elicitation_callback=elicit) as c:
            names = {t.name for t in (await c.list_tools()).tools}
    # the server was never offered elicitation, so it has no elicitation tool at all
    assert "everything__trigger-elicitation-request" not in names
    assert asked == []


async def test_a_backends_sampling_goes_to_the_calling_clients_model() -> None:
    mode = "legacy"

    async def sample(context: Any, params: Any) -> types.CreateMessageResult:
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text="the client's model says hi"),
            model="client-model",
        )

    async with serving(ScriptedPerson(), everything()) as running:
        token = await running.endpoint.book.add("ide")
        async with sdk_client(running.url, token, mode=mode, sampling_callback=sample) as c:
            result = await c.call_tool(
                "everything__trigger-sampling-request", {"prompt": "hello", "maxTokens": 20}
            )
    assert "the client's model says hi" in texts(result)


async def test_log_lines_and_resource_updates_reach_a_subscribed_session() -> None:
    logs: list[Any] = []
    updated: list[str] = []

    async def on_log(params: Any) -> None:
        logs.append(params)

    async def on_message(message: Any) -> None:
        root = getattr(message, "root", message)
        if getattr(root, "method", "") == "notifications/resources/updated":
            updated.append(str(root.params.uri))

    # server-everything simulates updates per handshake-era session
    async with serving(ScriptedPerson(), everything(protocol="legacy")) as running:
        token = await running.endpoint.book.add("ide")
        async with sdk_client(
            running.url, token, mode="legacy", logging_callback=on_log, message_handler=on_message
        ) as client:
            uri = str((await client.list_resources()).resources[0].uri)
            with handshake_era():
                await client.set_logging_level("debug")
                await client.subscribe_resource(uri)
            await client.call_tool("everything__toggle-simulated-logging", {})
            await client.call_tool("everything__toggle-subscriber-updates", {})
            await until(lambda: bool(updated))
            await until(lambda: any(p.logger == "everything" for p in logs))
    assert uri in updated


async def test_a_profile_limits_what_a_client_sees_and_calls() -> None:
    async with serving(
        ScriptedPerson(), everything(), toolbox_spec("tb", trust=TrustLevel.FULL)
    ) as running:
        book = running.endpoint.book
        token = await book.add("narrow")
        await book.set_profile("narrow", ("tb",), ("tb__echo",))
        async with sdk_client(running.url, token, mode="legacy") as client:
            names = {t.name for t in (await client.list_tools()).tools}
            hidden = await client.call_tool("everything__echo", {"message": "x"})
            other = await client.call_tool("tb__add", {"a": 1, "b": 2})
            shown = await client.call_tool("tb__echo", {"text": "ok"})
            prompts = {p.name for p in (await client.list_prompts()).prompts}
    assert names == {"tb__echo"}
    assert hidden.is_error and "Unknown tool" in texts(hidden)
    assert other.is_error and "Unknown tool" in texts(other)
    assert texts(shown) == "echo: ok"
    assert not any(p.startswith("everything__") for p in prompts)
