"""Failed turns never lose the conversation and can be retried; runaway tool loops end;
bad arguments go back to the model; edit and regenerate make branches."""

from __future__ import annotations

import json

import pytest

from portico.chat.events import (
    Notice,
    ToolCallFinished,
    TurnFailed,
    TurnFinished,
)
from tests.chat.conftest import chat_setup, collect, everything_spec, needs_npm, provider
from tests.servers.model_server import error, text, tool_call

pytestmark = pytest.mark.slow  # talks to real servers or processes


async def test_errors_are_plain_and_a_retry_works(models) -> None:
    models.script(error(500), text("Fine now."))
    async with chat_setup(providers=(provider(models),)) as s:
        chat = await s.host.new()
        failed = await collect(chat.send("hello"))
        assert isinstance(failed.last, TurnFailed)
        assert failed.last.retryable and failed.last.kind == "server"
        assert "HTTP 500" in failed.last.error and "Traceback" not in failed.last.error
        assert [m.status for m in chat.messages] == ["complete", "failed"]
        again = await collect(chat.retry())
        assert again.text == "Fine now." and isinstance(again.last, TurnFinished)
        assert [(m.role, m.status) for m in chat.messages] == [
            ("user", "complete"),
            ("assistant", "complete"),
        ]
        stored = await s.host.store.load(chat.id)
        assert len(stored.messages) == 2  # the failed answer was replaced, not kept


async def test_each_failure_kind_reads_plainly(models) -> None:
    models.script(
        error(401),
        error(404),
        error(429, retry_after=12),
        {"context_too_long": {"tokens": 140_000, "limit": 128_000}},
        {"not_an_api": True},
    )
    async with chat_setup(providers=(provider(models),)) as s:
        chat = await s.host.new()
        results = [(await collect(chat.send(f"q{i}"))).last for i in range(5)]
    auth, missing, limited, long, odd = results
    assert auth.kind == "auth" and not auth.retryable and "portico secret set" in auth.error
    assert missing.kind == "not_found" and "gpt-test, vision-test" in missing.error
    assert limited.kind == "rate_limit" and limited.retry_after == 12 and "12 s" in limited.error
    assert long.kind == "context" and "140,000 tokens" in long.error and "128,000" in long.error
    assert odd.kind == "incompatible" and "/v1" in odd.error


async def test_network_down_and_unknown_model_choice() -> None:
    from pathlib import Path

    from portico.config.model import Dialect, ProviderSpec, Scope, Source

    down = ProviderSpec(
        "down",
        Source(Path("/c.yaml"), 1, Scope.GLOBAL, Dialect.YAML),
        "openai",
        "http://127.0.0.1:9/v1",
        models=("m",),
    )
    async with chat_setup(providers=(down,)) as s:
        chat = await s.host.new()
        run = await collect(chat.send("hi"))
        assert run.last.kind == "network" and run.last.retryable
        assert "Cannot reach http://127.0.0.1:9/v1" in run.last.error
        bad = await collect(chat.send("/model nowhere/x"))
        assert bad.last.kind == "config" and "configured: down" in bad.last.error


@needs_npm
async def test_max_tool_rounds_ends_a_runaway_loop(models) -> None:
    models.set_default(tool_call("everything__get-sum", {"a": 1, "b": 1}))
    async with chat_setup(everything_spec(), providers=(provider(models),), max_tool_rounds=3) as s:
        chat = await s.host.new()
        run = await collect(chat.send("loop forever"))
    assert len(run.of(ToolCallFinished)) == 3
    assert isinstance(run.last, TurnFinished) and run.last.stop_reason == "tool_rounds"
    assert "max_tool_rounds" in run.of(Notice)[0].text
    assert len(models.requests) == 4


@needs_npm
async def test_bad_arguments_go_back_to_the_model(models) -> None:
    models.script(
        tool_call("everything__get-sum", '{"a": 2, "b":'),
        tool_call("everything__get-sum", {"a": "two", "b": 40}),
        text("I will ask for numbers."),
    )
    async with chat_setup(everything_spec(), providers=(provider(models),)) as s:
        chat = await s.host.new()
        run = await collect(chat.send("sum"))
    broken, invalid = run.of(ToolCallFinished)
    assert broken.outcome == "error" and "not valid JSON" in broken.error
    assert not invalid.ok and "Invalid arguments" in invalid.result.text()
    told = json.dumps(models.requests[2].body["messages"])
    assert "not valid JSON" in told and "Invalid arguments" in told
    assert run.text == "I will ask for numbers."


async def test_edit_and_regenerate_are_branches(models) -> None:
    models.script(text("First answer."), text("Second answer."), text("Answer to the edit."))
    async with chat_setup(providers=(provider(models),)) as s:
        chat = await s.host.new()
        await collect(chat.send("question"))
        first = chat.messages[-1]
        await collect(chat.regenerate())
        second = chat.messages[-1]
        assert second.text == "Second answer." and chat.siblings(second.id) == [first.id, second.id]
        question = chat.messages[0]
        await collect(chat.edit(question.id, "better question"))
        assert [m.text for m in chat.messages] == ["better question", "Answer to the edit."]
        assert len(chat.siblings(chat.messages[0].id)) == 2
        await chat.switch_to(question.id)
        assert [m.text for m in chat.messages] == ["question", "Second answer."]
        # the tree survives a reload
        s.host.forget(chat.id)
        again = await s.host.open(chat.id)
        assert [m.text for m in again.messages] == ["question", "Second answer."]
        assert len(again.siblings(question.id)) == 2
