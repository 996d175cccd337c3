"""Switching the model mid-chat: the next turn goes to the new provider, and the tool
calls and results the other provider's model made are sent in the new one's format, with
ids it accepts (the scripted model server records the real SDKs' request bodies)."""

from __future__ import annotations

import json
import re

import pytest

from tests.chat.conftest import chat_setup, collect, everything_spec, needs_npm, provider
from tests.servers.model_server import text

pytestmark = [needs_npm, pytest.mark.slow]


def call(name: str, arguments: dict[str, object], call_id: str) -> dict[str, object]:
    return {"tool_calls": [{"name": name, "arguments": arguments, "id": call_id}]}


async def test_openai_tool_history_goes_to_anthropic_and_back(models, tmp_path) -> None:
    models.script(
        call("everything__get-sum", {"a": 2, "b": 40}, "call.1:0"),  # a local server's id
        text("42."),
        {
            "text": "Adding.",
            "tool_calls": [{"name": "everything__get-sum", "arguments": {"a": 1, "b": 1}}],
        },
        text("2."),
        text("Both done."),
    )
    openai = provider(models)
    claude = provider(models, "claude", kind="anthropic")
    async with chat_setup(
        everything_spec(), providers=(openai, claude), store_path=tmp_path / "c.db"
    ) as s:
        chat = await s.host.new("scripted/gpt-test")
        await collect(chat.send("2 + 40?"))
        await chat.set_model("claude/claude-test")
        await collect(chat.send("and 1 + 1?"))
        await chat.set_model("scripted/gpt-test")
        await collect(chat.send("thanks"))
        answers = [m for m in chat.messages if m.role == "assistant"]
    assert [m.model for m in answers] == [
        "scripted/gpt-test",
        "claude/claude-test",
        "scripted/gpt-test",
    ]
    paths = [r.path for r in models.requests]
    assert paths == ["/v1/chat/completions"] * 2 + ["/v1/messages"] * 2 + ["/v1/chat/completions"]
    # the OpenAI call, in Anthropic's blocks, its id made to fit ^[a-zA-Z0-9_-]+$
    anthropic = models.requests[2].body["messages"]
    assert [m["role"] for m in anthropic] == ["user", "assistant", "user", "assistant", "user"]
    [use] = [b for b in anthropic[1]["content"] if b["type"] == "tool_use"]
    [result] = anthropic[2]["content"]
    assert use["name"] == "everything__get-sum" and use["input"] == {"a": 2, "b": 40}
    assert re.fullmatch(r"[A-Za-z0-9_-]+", use["id"]) and result["tool_use_id"] == use["id"]
    assert result["type"] == "tool_result" and "42" in json.dumps(result["content"])
    assert anthropic[3]["content"] == [{"type": "text", "text": "42."}]
    # and back: both calls, each with its result, in OpenAI's shape
    back = models.requests[4].body["messages"]
    calls = [c for m in back if m["role"] == "assistant" for c in m.get("tool_calls") or ()]
    results = [m for m in back if m["role"] == "tool"]
    assert [c["id"] for c in calls] == [r["tool_call_id"] for r in results]
    assert calls[0]["id"] == "call.1:0"
    assert json.loads(calls[1]["function"]["arguments"]) == {"a": 1, "b": 1}
    assert "2" in results[1]["content"]
