"""Extended thinking in a tool loop (Anthropic): the answer's ``thinking`` and
``redacted_thinking`` blocks, with their signature, go back unchanged in the request
that carries the tool results, as the Messages API requires; they are kept with the
turn in the store, so a reopened chat sends them too, and the thinking is there to show.
The scripted model server refuses, as the real API does, a tool-result request whose
previous answer lacks its thinking block or carries a changed signature."""

from __future__ import annotations

import httpx2
import pytest

from portico.chat.events import ReasoningDelta, TurnFailed, TurnFinished
from portico.chat.settings import ChatSettings
from tests.chat.conftest import chat_setup, collect, provider
from tests.helpers.specs import toolbox_spec
from tests.servers.model_server import sign, text

pytestmark = pytest.mark.slow  # the toolbox server and the scripted model server

THOUGHT = "The person wants a sum: the add tool does it."


def adding(**extra: object) -> dict[str, object]:
    return {
        "text": "Adding.",
        "tool_calls": [{"name": "toolbox__add", "arguments": {"a": 2, "b": 40}}],
        **extra,
    }


async def test_thinking_blocks_go_back_unchanged_in_the_tool_loop(models, tmp_path) -> None:
    models.script(adding(thinking=THOUGHT), text("It is 42."), text("Still 42."))
    spec = provider(models, "claude", kind="anthropic", max_tokens=2000)
    store = tmp_path / "c.db"
    async with chat_setup(toolbox_spec(), providers=(spec,), store_path=store) as s:
        chat = await s.host.new("claude/claude-test")
        await chat.set_settings(ChatSettings(thinking_budget=1024))
        run = await collect(chat.send("2 + 40?"))
        assert not run.of(TurnFailed), run.of(TurnFailed)
        assert isinstance(run.last, TurnFinished) and run.text.endswith("It is 42.")
        assert "".join(e.text for e in run.of(ReasoningDelta)) == THOUGHT
        chat_id = chat.id
    second = models.requests[1].body
    assert second["thinking"] == {"type": "enabled", "budget_tokens": 1024}
    answer = second["messages"][1]
    assert answer["role"] == "assistant"
    assert answer["content"][0] == {
        "type": "thinking",
        "thinking": THOUGHT,
        "signature": sign(THOUGHT),
    }
    assert [b["type"] for b in answer["content"]] == ["thinking", "text", "tool_use"]
    assert second["messages"][2]["content"][0]["type"] == "tool_result"
    async with chat_setup(toolbox_spec(), providers=(spec,), store_path=store) as s:
        again = await s.host.open(chat_id)
        first_round = again.messages[1].rounds[0]
        assert first_round.thinking == THOUGHT  # kept with the turn, to show
        run = await collect(again.send("And again?"))
        assert isinstance(run.last, TurnFinished) and run.text == "Still 42."
    resent = models.requests[2].body["messages"][1]["content"][0]
    assert resent == {"type": "thinking", "thinking": THOUGHT, "signature": sign(THOUGHT)}


async def test_a_redacted_thinking_block_goes_back_as_it_came(models) -> None:
    models.script(adding(redacted_thinking="EncryptedOpaqueData=="), text("It is 42."))
    spec = provider(models, "claude", kind="anthropic", max_tokens=2000)
    async with chat_setup(toolbox_spec(), providers=(spec,)) as s:
        chat = await s.host.new("claude/claude-test")
        await chat.set_settings(ChatSettings(thinking_budget=1024))
        run = await collect(chat.send("2 + 40?"))
        assert isinstance(run.last, TurnFinished) and run.text.endswith("It is 42.")
    blocks = models.requests[1].body["messages"][1]["content"]
    assert blocks[0] == {"type": "redacted_thinking", "data": "EncryptedOpaqueData=="}


async def test_the_scripted_server_refuses_what_the_real_api_refuses(models) -> None:
    tool_use = {"type": "tool_use", "id": "toolu_1", "name": "toolbox__add", "input": {}}
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "42"}
    body = {
        "model": "claude-test",
        "max_tokens": 2000,
        "thinking": {"type": "enabled", "budget_tokens": 1024},
        "messages": [
            {"role": "user", "content": "2 + 40?"},
            {"role": "assistant", "content": [tool_use]},
            {"role": "user", "content": [result]},
        ],
    }
    async with httpx2.AsyncClient() as client:
        url = f"{models.anthropic_url}/v1/messages"
        missing = await client.post(url, json=body)
        assert missing.status_code == 400
        assert "must start with a thinking block" in missing.json()["error"]["message"]
        forged = {"type": "thinking", "thinking": THOUGHT, "signature": sign("other")}
        body["messages"][1]["content"] = [forged, tool_use]
        changed = await client.post(url, json=body)
        assert changed.status_code == 400
        assert "Invalid `signature`" in changed.json()["error"]["message"]
        models.script(text("ok"))
        body["messages"][1]["content"][0]["signature"] = sign(THOUGHT)
        fine = await client.post(url, json=body)
        assert fine.status_code == 200
