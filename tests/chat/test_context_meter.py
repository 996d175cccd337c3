"""The context meter: what the next request will send, estimated locally, per part and
per server, and the warning near the model's context length."""

from __future__ import annotations

from portico.chat.context_meter import estimate
from portico.chat.providers.wire import AssistantTurn, ModelRequest, ToolOffer, UserTurn
from tests.chat.conftest import chat_setup, collect, provider
from tests.servers.model_server import ModelServer, text

SCHEMA = {"type": "object", "properties": {"q": {"type": "string"}}}


def test_parts_and_tools_per_server() -> None:
    request = ModelRequest(
        model="m",
        turns=[UserTurn("x" * 400), AssistantTurn("y" * 40)],
        system="s" * 80,
        tools=[
            ToolOffer("docs__search", "Search the docs.", SCHEMA),
            ToolOffer("docs__read", "Read one page.", SCHEMA),
            ToolOffer("git__log", "The log.", {}),
        ],
        max_tokens=1000,
    )
    meter = estimate(request, context_length=8000)
    assert (meter.system, meter.messages, meter.message_count) == (20, 100 + 10 + 8, 2)
    assert [(server, count) for server, count, _t in meter.tools] == [("docs", 2), ("git", 1)]
    assert meter.total == meter.system + meter.messages + meter.tools_total
    assert not meter.near_limit
    assert meter.summary() == f"Context: ~{meter.total:,} of 8,000 tokens (estimate)"
    details = meter.breakdown()
    assert details[0] == "Messages: ~118 tokens (2 messages)"
    assert any(line.startswith("Tools of docs: ~") and "(2 schemas)" in line for line in details)
    assert details[-1].startswith("Estimated locally")
    tight = estimate(request, context_length=meter.total + 1000)  # the answer's room fills it
    assert tight.summary().endswith("(estimate) · nearly full")
    assert tight.near_limit and any(line.startswith("Nearly full") for line in tight.breakdown())
    unknown = estimate(request)
    assert not unknown.near_limit and "not known" in " ".join(unknown.breakdown())


async def test_a_chat_estimates_its_next_request_without_a_request(models: ModelServer) -> None:
    models.script(text("A long answer. " * 40))
    spec = provider(models, context_length=4096, max_tokens=256)
    async with chat_setup(providers=(spec,)) as s:
        chat = await s.host.new()
        before = await chat.context_estimate()
        await collect(chat.send("Tell me a lot " * 20))
        after = await chat.context_estimate()
    assert len(models.requests) == 1  # the estimates asked the server nothing
    assert before is not None and after is not None
    assert (before.message_count, after.message_count) == (0, 2)
    assert after.messages >= (len("Tell me a lot " * 20) + len("A long answer. " * 40)) // 4
    assert after.context_length == 4096 and after.max_tokens == 256
