"""The agent loop end to end: the scripted model (real SDKs over sockets) calls
server-everything's tools through the guard, a scripted person answers approvals."""

from __future__ import annotations

import json

import pytest

from portico.chat.events import (
    ApprovalAnswered,
    ApprovalAsked,
    SpendChanged,
    ToolCallFinished,
    ToolCallStarted,
    TurnFailed,
    TurnFinished,
    TurnStarted,
    Usage,
)
from portico.config.model import ToolCost
from portico.prompts import ApprovalAnswer, ApprovalChoice
from tests.chat.conftest import (
    chat_setup,
    collect,
    everything_spec,
    needs_npm,
    provider,
)
from tests.servers.model_server import text, tool_call

pytestmark = [needs_npm, pytest.mark.slow]


async def test_get_sum_with_approval_then_the_answer_streams(models) -> None:
    models.script(
        tool_call("everything__get-sum", {"a": 2, "b": 40}),
        text("The sum is 42."),
    )
    # get-sum is read-only, so the approval here is the spend limit's: it costs 5 credits
    # and the chat may spend 3 on this server
    costed = everything_spec(tool_costs=(("get-sum", ToolCost(5, 5)),), spend_limit=3.0)
    async with chat_setup(costed, providers=(provider(models),)) as s:
        s.person.add("approve_spend", ApprovalChoice.ONCE)
        chat = await s.host.new()
        assert chat.model == "scripted/gpt-test"
        run = await collect(chat.send("What is 2 + 40?"))
    [started] = run.of(ToolCallStarted)
    assert (started.server, started.tool) == ("everything", "get-sum")
    assert started.arguments == {"a": 2, "b": 40}
    [asked] = run.of(ApprovalAsked)
    assert asked.call_id == started.id and asked.request.tool == "get-sum"
    assert "past the limit" in asked.request.limit_line
    [answered] = run.of(ApprovalAnswered)
    assert answered.choice == "once"
    [finished] = run.of(ToolCallFinished)
    assert finished.outcome == "ok" and "42" in finished.result.text()
    assert run.text == "The sum is 42."
    assert isinstance(run.last, TurnFinished) and run.last.stop_reason == "end_turn"
    assert len(run.of(Usage)) == 2 and run.of(TurnStarted)
    # the result went back to the model in the OpenAI format
    second = models.requests[1].body
    tool_messages = [m for m in second["messages"] if m["role"] == "tool"]
    assert tool_messages[0]["tool_call_id"] == started.id and "42" in tool_messages[0]["content"]
    # server-everything has more tools than defer_tools: they hide behind tool_search
    [offered] = models.requests[0].body["tools"]
    assert offered["function"]["name"] == "tool_search"
    assert "everything__get-sum" in offered["function"]["description"]
    assert chat.messages[-1].tool_calls[0].outcome == "ok"
    assert run.of(SpendChanged)[0].totals == {"everything": 5.0}


async def test_denied_call_is_reported_as_denied(models) -> None:
    models.script(tool_call("everything__toggle-simulated-logging", {}), text("Okay, not then."))
    async with chat_setup(everything_spec(), providers=(provider(models),)) as s:
        s.person.add("approve_tool", ApprovalAnswer(ApprovalChoice.DENY))
        chat = await s.host.new()
        run = await collect(chat.send("add"))
    [finished] = run.of(ToolCallFinished)
    assert finished.outcome == "denied" and finished.result is None
    assert "denied" in (finished.error or "")
    back = json.dumps(models.requests[1].body["messages"])
    assert "denied the call" in back
    assert run.text == "Okay, not then."
    assert not run.of(TurnFailed)


async def test_the_same_with_anthropic(models) -> None:
    models.script(
        {
            "text": "Let me add.",
            "tool_calls": [{"name": "everything__get-sum", "arguments": {"a": 2, "b": 40}}],
        },
        text("It is 42."),
    )
    spec = provider(models, "claude", kind="anthropic")
    async with chat_setup(everything_spec(), providers=(spec,)) as s:
        chat = await s.host.new("claude/claude-test")
        run = await collect(chat.send("2 + 40?"))
    assert run.text == "Let me add.\n\nIt is 42."
    [finished] = run.of(ToolCallFinished)
    assert finished.ok and "42" in finished.result.text()
    first, second = (r.body for r in models.requests)
    assert models.requests[0].path == "/v1/messages" and "system" in first
    [use] = [b for b in second["messages"][1]["content"] if b["type"] == "tool_use"]
    assert use["input"] == {"a": 2, "b": 40}
    [result] = second["messages"][2]["content"]
    assert result["type"] == "tool_result" and result["tool_use_id"] == use["id"]
    assert "42" in result["content"][0]["text"] and result["is_error"] is False
    assert run.last.stop_reason == "end_turn"


async def test_image_results_reach_a_vision_model_as_images(models) -> None:
    models.script(
        tool_call("everything__get-tiny-image", {}),
        text("A tiny image."),
        tool_call("everything__get-tiny-image", {}),
        text("Same."),
    )
    seeing = provider(models, "seeing", models=("vision-test",), vision=True)
    blind = provider(models, "blind")
    async with chat_setup(everything_spec(), providers=(seeing, blind)) as s:
        chat = await s.host.new("seeing/vision-test")
        await collect(chat.send("show me"))
        other = await s.host.new("blind/gpt-test")
        await collect(other.send("show me"))
    with_vision = models.requests[1].body["messages"]
    [images] = [m for m in with_vision if m["role"] == "user" and isinstance(m["content"], list)]
    urls = [p["image_url"]["url"] for p in images["content"] if p["type"] == "image_url"]
    assert len(urls) == 1 and urls[0].startswith("data:image/png;base64,")
    without = models.requests[3].body["messages"]
    [tool] = [m for m in without if m["role"] == "tool"]
    assert "MEDIA:" in tool["content"]
    assert not any(isinstance(m["content"], list) for m in without)


async def test_big_images_are_downscaled_and_at_most_four_go(models, tmp_path) -> None:
    import io

    from PIL import Image

    from portico.chat.messages import Message, Round, ToolCall

    paths = []
    for i in range(6):
        path = tmp_path / f"big{i}.png"
        Image.new("RGB", (4000, 2000), (i * 40, 0, 0)).save(path)
        paths.append(path)
    models.script(text("Six images."))
    seeing = provider(models, "seeing", models=("vision-test",), vision=True)
    async with chat_setup(providers=(seeing,)) as s:
        chat = await s.host.new()
        call = ToolCall("c1", "x__shots", {}, "{}", "ok", "six shots", tuple(paths))
        user = Message("u1", "user", "shots?")
        answer = Message(
            "a1", "assistant", "", parent_id="u1", tool_calls=[call], rounds=[Round("", ["c1"])]
        )
        chat._add(user)
        chat._add(answer)
        user2 = Message("u2", "user", "and?", parent_id="a1")
        chat._add(user2)
        await collect(chat.retry())
    body = models.requests[0].body["messages"]
    [images] = [m for m in body if m["role"] == "user" and isinstance(m["content"], list)]
    import base64

    urls = [p["image_url"]["url"] for p in images["content"] if p["type"] == "image_url"]
    assert len(urls) == 4
    data = base64.b64decode(urls[0].split(",", 1)[1])
    assert max(Image.open(io.BytesIO(data)).size) == 1568


async def test_image_results_reach_an_anthropic_vision_model_inside_the_tool_result(
    models,
) -> None:
    models.script(tool_call("everything__get-tiny-image", {}), text("A logo."))
    spec = provider(models, "claude", kind="anthropic", vision=True)
    async with chat_setup(everything_spec(), providers=(spec,)) as s:
        chat = await s.host.new("claude/claude-test")
        run = await collect(chat.send("show me"))
    assert run.text == "A logo."
    [result] = models.requests[1].body["messages"][2]["content"]
    kinds = [block["type"] for block in result["content"]]
    assert result["type"] == "tool_result" and kinds == ["text", "image"]
    assert result["content"][1]["source"]["media_type"] == "image/png"
