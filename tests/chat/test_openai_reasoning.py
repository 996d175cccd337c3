"""Reasoning on OpenAI-compatible servers: DeepSeek, llama.cpp and vLLM stream it in the
delta's ``reasoning_content``, OpenRouter and Ollama in ``reasoning``. Either is shown as
thinking (ReasoningDelta), kept with its round in the store, and never part of the answer's
text nor sent back: the scripted model server refuses, as DeepSeek's API does, a request
whose messages carry it."""

from __future__ import annotations

import pytest

from portico.chat.events import ReasoningDelta, TurnFailed, TurnFinished
from tests.chat.conftest import chat_setup, collect, provider
from tests.helpers.specs import toolbox_spec
from tests.servers.model_server import text

pytestmark = pytest.mark.slow  # the toolbox server and the scripted model server

FIRST = "The person wants a sum: the add tool does it."
SECOND = "The tool said 42, so the answer is 42."


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
async def test_streamed_reasoning_is_thinking_kept_and_never_sent_back(
    models, tmp_path, field: str
) -> None:
    models.script(
        {
            "text": "Adding.",
            "tool_calls": [{"name": "toolbox__add", "arguments": {"a": 2, "b": 40}}],
            "reasoning": FIRST,
            "reasoning_field": field,
        },
        text("It is 42.", reasoning=SECOND, reasoning_field=field),
        text("Still 42."),
    )
    spec = provider(models, "deep")
    store = tmp_path / "c.db"
    async with chat_setup(toolbox_spec(), providers=(spec,), store_path=store) as s:
        chat = await s.host.new("deep/gpt-test")
        run = await collect(chat.send("2 + 40?"))
        assert not run.of(TurnFailed), run.of(TurnFailed)
        assert isinstance(run.last, TurnFinished)
        assert "".join(e.text for e in run.of(ReasoningDelta)) == FIRST + SECOND
        assert run.text == "Adding.\n\nIt is 42."  # the reasoning is not the answer
        answer = chat.messages[1]
        assert [r.thinking for r in answer.rounds] == [FIRST, SECOND]
        assert FIRST not in answer.text and SECOND not in answer.text
        chat_id = chat.id
    second = models.requests[1].body["messages"]
    sent_back = [m for m in second if m["role"] == "assistant"]
    assert sent_back and all(FIRST not in str(m) for m in sent_back)
    async with chat_setup(toolbox_spec(), providers=(spec,), store_path=store) as s:
        again = await s.host.open(chat_id)
        assert [r.thinking for r in again.messages[1].rounds] == [FIRST, SECOND]
        run = await collect(again.send("And again?"))
        assert isinstance(run.last, TurnFinished) and run.text == "Still 42.", run.events
    third = models.requests[2].body["messages"]
    assert all(FIRST not in str(m) and SECOND not in str(m) for m in third)


async def test_the_scripted_server_refuses_reasoning_sent_back(models) -> None:
    """The check the test above relies on: a message carrying its reasoning is a 400."""
    import httpx2

    body = {
        "model": "gpt-test",
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "hello", "reasoning_content": "greet back"},
            {"role": "user", "content": "again"},
        ],
    }
    async with httpx2.AsyncClient() as client:
        answer = await client.post(f"{models.openai_url}/chat/completions", json=body)
    assert answer.status_code == 400
    assert "reasoning_content" in answer.json()["error"]["message"]
