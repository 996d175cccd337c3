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


PROTOCOL = {"legacy": "2025-11-25", "auto": "2026-07-28"}


async def until(check: Any, seconds: float = 12.0) -> None:
    deadline = asyncio.get_running_loop().time() + seconds
    while not check():
        assert asyncio.get_running_loop().time() < deadline, "not in time"
        await asyncio.sleep(0.05)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_backends_elicitation_goes_to_the_calling_client(mode: str) -> None:
    """legacy: on the call's stream; auto (2026-07-28, no back-channel): in an
    input-required result, the backend's call held until the client retries."""
    person = ScriptedPerson()  # asked nothing: the client answers
    asked: list[str] = []

    async def elicit(context: Any, params: Any) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"name": "Ada Lovelace"})

    async with serving(person, everything()) as running:
        token = await running.endpoint.book.add("ide")
        async with sdk_client(running.url, token, mode=mode, elicitation_callback=elicit) as c:
            assert c.protocol_version == PROTOCOL[mode]
            result = await c.call_tool("everything__trigger-elicitation-request", {})
    assert asked, "the client was not asked"
    assert "Ada Lovelace" in texts(result)
    assert person.requests("elicit") == []


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_client_that_declared_no_elicitation_leaves_it_to_the_person(mode: str) -> None:
    from portico.prompts import ElicitationAnswer

    person = ScriptedPerson(elicit=[ElicitationAnswer("decline")])
    async with serving(person, everything()) as running:
        token = await running.endpoint.book.add("ide")
        async with sdk_client(running.url, token, mode=mode) as client:
            assert client.protocol_version == PROTOCOL[mode]
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


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_backends_sampling_goes_to_the_calling_clients_model(mode: str) -> None:

    async def sample(context: Any, params: Any) -> types.CreateMessageResult:
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text="the client's model says hi"),
            model="client-model",
        )

    async with serving(ScriptedPerson(), everything()) as running:
        token = await running.endpoint.book.add("ide")
        async with sdk_client(running.url, token, mode=mode, sampling_callback=sample) as c:
            assert c.protocol_version == PROTOCOL[mode]
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


async def test_a_held_2026_call_answers_only_its_own_clients_retry_with_its_state() -> None:
    """The requestState of a held call is the client's, single-use: a forged one, or the
    right one from another client, is refused, and the call still completes for its own
    client's retry."""
    from mcp import MCPError

    async def elicit(context: Any, params: Any) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"name": "Grace Hopper"})

    async with serving(ScriptedPerson(), everything()) as running:
        ide = await running.endpoint.book.add("ide")
        other = await running.endpoint.book.add("other")
        async with (
            sdk_client(running.url, ide, elicitation_callback=elicit) as c,
            sdk_client(running.url, other, elicitation_callback=elicit) as intruder,
        ):
            name = "everything__trigger-elicitation-request"
            first = await c.session.call_tool(name, {}, allow_input_required=True)
            assert isinstance(first, types.InputRequiredResult), first
            assert first.input_requests and first.request_state
            (key, request), *_ = first.input_requests.items()
            assert request.method == "elicitation/create"
            answer = {key: types.ElicitResult(action="accept", content={"name": "Grace Hopper"})}
            for session, state in ((c.session, "forged"), (intruder.session, first.request_state)):
                with pytest.raises(MCPError, match="requestState is unknown"):
                    await session.call_tool(
                        name,
                        {},
                        input_responses=answer,
                        request_state=state,
                        allow_input_required=True,
                    )
            done = await c.session.call_tool(
                name,
                {},
                input_responses=answer,
                request_state=first.request_state,
                allow_input_required=True,
            )
            assert isinstance(done, types.CallToolResult)
            assert "Grace Hopper" in texts(done)
            with pytest.raises(MCPError, match="already used"):  # single-use
                await c.session.call_tool(
                    name,
                    {},
                    input_responses=answer,
                    request_state=first.request_state,
                    allow_input_required=True,
                )
    refused = [e for e in running.endpoint.gateway.activity.entries() if "stale" in e.outcome]
    assert {e.client for e in refused} == {"ide", "other"}
