"""``/call`` in direct mode: its events come in order and everything lands in the store,
for a call that runs, one refused before it reaches a server, and one stopped at any
moment (a turn's opening is announced once its call is under way, see ``_Events.defer``)."""

from __future__ import annotations

import asyncio

import pytest

from portico.chat.events import (
    Event,
    TitleChanged,
    ToolCallFinished,
    ToolCallStarted,
    TurnFinished,
    TurnStarted,
    UserMessageAdded,
)
from portico.config.model import TrustLevel
from tests.chat.conftest import Setup, chat_setup, collect, in_background
from tests.helpers.specs import toolbox_spec

pytestmark = pytest.mark.slow  # talks to real servers or processes

OPENING = [UserMessageAdded, TurnStarted, ToolCallStarted]


def _kinds(events: list[Event]) -> list[type]:
    return [type(e) for e in events if not isinstance(e, TitleChanged)]  # the first call's


async def test_a_call_that_runs_and_calls_refused_before_any_server() -> None:
    async with chat_setup(toolbox_spec("tb", trust=TrustLevel.FULL)) as s:
        chat = await s.host.new()
        ran = await collect(chat.send('/call tb__echo {"text": "hi"}'))
        assert _kinds(ran.events) == [*OPENING, ToolCallFinished, TurnFinished]
        assert ran.of(TitleChanged)[0].title == "tb__echo"
        assert ran.of(ToolCallFinished)[0].result.text() == "echo: hi"
        # refused by the guard or the registry without a server being asked
        for text, problem in (
            ("/call tb__echo {}", "text"),  # a required argument is missing
            ('/call tb__nope {"a": 1}', "tb__nope"),  # no such tool
        ):
            run = await collect(chat.send(text))
            assert _kinds(run.events) == [*OPENING, ToolCallFinished, TurnFinished], text
            [finished] = run.of(ToolCallFinished)
            said = finished.error or (finished.result.text() if finished.result else "")
            assert not finished.ok and problem in said, finished
        await s.host.store.flush()
        stored = await s.host.store.load(chat.id)
        assert [m.role for m in stored.messages] == ["user", "assistant"] * 3
        calls = [c for m in stored.messages for c in m.tool_calls]
        assert [c.name for c in calls] == ["tb__echo", "tb__echo", "tb__nope"]
        assert calls[0].result_text == "echo: hi" and calls[0].outcome == "ok"
        assert all(c.is_error for c in calls[1:])
        assert [m.status for m in stored.messages if m.role == "assistant"] == ["complete"] * 3


async def test_a_call_stopped_at_any_moment_ends_in_order() -> None:
    """Stop after 0, 1, 2, 3, 5, 8 and 13 loop passes, each in a new chat on one hub (one
    server start, not seven: the moments differ in the chat, not in the server)."""
    async with chat_setup(toolbox_spec("tb", trust=TrustLevel.FULL)) as s:
        for passes in (0, 1, 2, 3, 5, 8, 13):
            await _stop_after(s, passes)


async def _stop_after(s: Setup, passes: int) -> None:
    chat = await s.host.new()
    task, seen = in_background(chat.send("/call tb__hang {}"))
    for _ in range(passes):
        await asyncio.sleep(0)
    await asyncio.sleep(0)  # the turn has begun: stop() has something to stop
    assert chat.stop()
    chat.stop()  # a second Stop changes nothing (one TurnFinished)
    await asyncio.wait_for(task, 10)
    shown = [e for e in seen if not isinstance(e, TitleChanged)]
    began = len(shown) > 1  # stopped before its task ran: nothing but the stop is said
    # with no pass, stop() came before the task's first step
    assert began == (passes > 0), passes
    kinds = [type(e) for e in shown]
    assert kinds == ([*OPENING, ToolCallFinished, TurnFinished] if began else [TurnFinished]), (
        passes
    )
    last = shown[-1]
    assert isinstance(last, TurnFinished) and last.stop_reason == "stopped"
    if began:
        opened, ended = shown[1], shown[-2]
        assert isinstance(ended, ToolCallFinished) and ended.outcome == "cancelled"
        assert isinstance(opened, TurnStarted) and last.message_id == opened.message_id
    assert [m.status for m in chat.messages] == (["complete", "stopped"] if began else [])
    if began:
        await s.host.store.flush()
        stored = await s.host.store.load(chat.id)
        assert [m.status for m in stored.messages] == ["complete", "stopped"]
    # the chat takes the next turn
    again = await collect(chat.send('/call tb__echo {"text": "again"}'))
    assert again.last == TurnFinished(again.of(TurnStarted)[0].message_id, "direct")
