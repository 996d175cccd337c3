"""Issue 26, item 4: server-everything's simulate-research-query declares
``execution.taskSupport: "required"``; a plain tools/call of it failed with -32601. On a
2025-11-25 session it now runs as a task: created by a task-augmented tools/call,
followed with tasks/get (its status as the call's progress), read with tasks/result,
cancelled with tasks/cancel."""

from __future__ import annotations

import asyncio

import pytest

from portico.config.model import Protocol
from portico.prompts import Caller
from portico.runtime.call_context import CallContext
from portico.runtime.connection import Connection
from portico.runtime.events import EventBus, Status
from tests.helpers.person import eventually

from .conftest import EVERYTHING, NODE, make_spec

pytestmark = [
    pytest.mark.slow,
    pytest.mark.npm,
    pytest.mark.skipif(not EVERYTHING.exists(), reason="npm peers not installed (scripts/test.sh)"),
]


def _everything() -> Connection:
    spec = make_spec(
        "everything",
        command=str(NODE),
        args=(str(EVERYTHING), "stdio"),
        protocol=Protocol.LEGACY,
        timeout=20,
        connect_timeout=30.0,
    )
    return Connection(spec, bus=EventBus())


def _methods(conn: Connection) -> list[str]:
    return [e.method for e in conn.activity.snapshot() if e.direction == "out"]


async def test_a_tool_that_requires_a_task_runs_as_one() -> None:
    conn = _everything()
    await conn.start()
    try:
        assert (await conn.wait_settled(30)).status is Status.RUNNING
        shown: list[str] = []

        def progress(done: float, total: float | None, message: str | None) -> None:
            shown.append(message or "")

        result = await conn.call_tool(
            "simulate-research-query",
            {"topic": "tide pools"},
            context=CallContext(caller=Caller("cli"), progress=progress),
        )
        assert not result.is_error
        text = result.content[0].text
        assert "tide pools" in text
        assert any("Gathering sources" in line for line in shown), shown
        sent = _methods(conn)
        assert "tasks/get" in sent and "tasks/result" in sent
    finally:
        await conn.stop()


async def test_cancelling_the_call_cancels_the_task() -> None:
    conn = _everything()
    await conn.start()
    try:
        assert (await conn.wait_settled(30)).status is Status.RUNNING
        call = asyncio.create_task(conn.call_tool("simulate-research-query", {"topic": "x"}))
        await eventually(lambda: "tasks/result" in _methods(conn), what="the task to start")
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        await eventually(lambda: "tasks/cancel" in _methods(conn), what="tasks/cancel sent")
    finally:
        await conn.stop()


async def test_the_task_asks_its_question_through_the_prompter() -> None:
    """An ambiguous query pauses the task (input_required) and asks for a clarification;
    the question comes through tasks/result to the elicitation policy and the person."""
    from portico.policy.setup import Policy
    from portico.prompts import ElicitationAnswer
    from tests.helpers.person import ScriptedPerson

    person = ScriptedPerson()
    person.add("elicit", lambda r: ElicitationAnswer("accept", {"interpretation": "historical"}))
    spec = make_spec(
        "everything",
        command=str(NODE),
        args=(str(EVERYTHING), "stdio"),
        protocol=Protocol.LEGACY,
        timeout=20,
        connect_timeout=30.0,
    )
    conn = Connection(spec, bus=EventBus(), hooks=Policy(person).hooks())
    await conn.start()
    try:
        assert (await conn.wait_settled(30)).status is Status.RUNNING
        result = await conn.call_tool(
            "simulate-research-query", {"topic": "tides", "ambiguous": True}
        )
        assert not result.is_error, result
        [asked] = person.requests("elicit")
        assert "multiple interpretations" in asked.message
        assert "historical" in result.content[0].text.lower()
    finally:
        await conn.stop()
