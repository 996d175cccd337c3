"""The provider's own context-length error, in each shape servers answer with (OpenAI's
``context_length_exceeded``, Anthropic's prompt-too-long 400, llama.cpp's
``exceed_context_size_error``, Ollama's), is a context failure: the turn is kept, the
line names /compact summarise and /compact trim, and either works from what the error
said of the model's context (nothing else knows it here) and the retry is answered."""

from __future__ import annotations

import pytest

from portico.chat.events import Notice, TurnFailed, TurnFinished
from tests.chat.conftest import chat_setup, collect, provider
from tests.servers.model_server import text

pytestmark = pytest.mark.slow  # the scripted model server

BIG = "alpha " * 3334  # ~5,000 tokens at 4 characters a token
MORE = "bravo " * 1934  # ~2,900
TOO_LONG = {"tokens": 9_000, "limit": 8_000}
SHAPES = {
    "openai": ("openai", {"context_too_long": TOO_LONG}, "(9,000 tokens; the model takes 8,000)"),
    "anthropic": ("anthropic", {"context_too_long": TOO_LONG}, "(9,000 tokens; the model takes"),
    "llamacpp": (
        "openai",
        {"context_too_long": {**TOO_LONG, "shape": "llamacpp"}},
        "(9,000 tokens; the model takes 8,000)",
    ),
    "ollama": ("openai", {"context_too_long": {**TOO_LONG, "shape": "ollama"}}, ""),
}


@pytest.mark.parametrize("mode", ["trim", "summarise"])
@pytest.mark.parametrize("shape", list(SHAPES))
async def test_a_context_error_offers_compact_and_the_retry_fits(
    models, shape: str, mode: str
) -> None:
    kind, refusal, figures = SHAPES[shape]
    replies = [text("Noted."), refusal]
    if mode == "summarise":
        replies.append(text("SUMMARY: alpha words were pasted."))
    models.script(*replies, text("Answered."))
    spec = provider(models, kind=kind, max_tokens=200)
    async with chat_setup(providers=(spec,)) as s:
        chat = await s.host.new()
        await collect(chat.send(BIG))
        run = await collect(chat.send(MORE))
        [failed] = run.of(TurnFailed)
        assert failed.kind == "context" and failed.message_id == chat.messages[-1].id
        assert "The conversation is too long for" in failed.error and figures in failed.error
        assert "/compact summarise" in failed.error and "/compact trim" in failed.error
        assert [m.status for m in chat.messages] == ["complete", "complete", "complete", "failed"]
        done = await collect(chat.send(f"/compact {mode}"))
        assert not done.of(TurnFailed), done.of(TurnFailed)
        assert done.of(Notice)[0].text.startswith("2 older messages left out of what is sent")
        retried = await collect(chat.retry())
        assert isinstance(retried.last, TurnFinished) and retried.text == "Answered."
    sent = models.requests[-1].body["messages"]
    users = [m for m in sent if m["role"] == "user"]
    assert len(users) == 1 and "bravo" in str(users[0]["content"])
    assert "alpha alpha" not in str(sent)  # the older messages are left out
    if mode == "summarise":
        assert "SUMMARY: alpha words were pasted." in str(models.requests[-1].body)
