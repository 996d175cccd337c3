"""Provider failures as one clear line, in both wire formats: a 401, a 429 with its
retry-after, a context-length error and a stream cut before its end each end the turn
with what to do, the question (and what arrived) is kept, and a retry (``/retry``) asks
again."""

from __future__ import annotations

import pytest

from portico.chat.events import TextDelta, TurnFailed, TurnFinished
from tests.chat.conftest import chat_setup, collect, provider
from tests.servers.model_server import error, text

pytestmark = pytest.mark.slow  # the scripted model server

FAILURES = {
    "auth": (error(401), "refused the API key (HTTP 401", "portico secret set"),
    "rate_limit": (error(429, retry_after=7), "is rate limited (HTTP 429", "Try again in 7 s."),
    "context": (
        {"context_too_long": {"tokens": 140_000, "limit": 128_000}},
        "The conversation is too long",
        "(/compact summarise) or trim them (/compact trim), then retry",
    ),
    "truncated": (
        text("Paris is the capital of", truncate_after=3),
        "stopped before its end",
        "Retry to ask again",
    ),
}


@pytest.mark.parametrize("api", ["openai", "anthropic"])
@pytest.mark.parametrize("kind", list(FAILURES))
async def test_each_failure_is_one_line_saying_what_to_do(models, api: str, kind: str) -> None:
    reply, what, todo = FAILURES[kind]
    models.script(reply, text("Paris."))
    async with chat_setup(providers=(provider(models, kind=api),)) as s:
        chat = await s.host.new()
        run = await collect(chat.send("Capital of France?"))
        failed = run.last
        assert isinstance(failed, TurnFailed) and failed.kind == kind
        assert what in failed.error and todo in failed.error
        assert "\n" not in failed.error and "Traceback" not in failed.error
        assert failed.message_id == chat.messages[-1].id
        question, answer = chat.messages
        assert (question.text, answer.status, answer.error) == (
            "Capital of France?",
            "failed",
            failed.error,
        )
        if kind == "rate_limit":
            assert failed.retry_after == 7 and failed.retryable
        if kind == "truncated":
            assert failed.retryable
            assert "".join(e.text for e in run.of(TextDelta)) == "Paris is the"
            assert answer.text == "Paris is the"  # what arrived is kept
            assert "the 12 characters that arrived are kept" in failed.error
        again = await collect(chat.send("/retry"))
        assert isinstance(again.last, TurnFinished) and again.text == "Paris."
        assert [(m.text, m.status) for m in chat.messages] == [
            ("Capital of France?", "complete"),
            ("Paris.", "complete"),
        ]
        stored = await s.host.store.load(chat.id)
        assert [m.text for m in stored.messages] == ["Capital of France?", "Paris."]


async def test_retry_with_nothing_to_retry_says_so(models) -> None:
    async with chat_setup(providers=(provider(models),)) as s:
        chat = await s.host.new()
        run = await collect(chat.send("/retry"))
    assert isinstance(run.last, TurnFailed) and run.last.error == "there is nothing to retry yet"
    assert models.requests == []
