"""Parallel tool calls honour supports_parallel_tool_calls; Stop cancels running calls on
the server and keeps the partial answer."""

from __future__ import annotations

import asyncio
import time

import pytest

from portico.chat.events import (
    ToolCallFinished,
    ToolCallProgress,
    ToolCallStarted,
    TurnFinished,
)
from portico.config.model import TrustLevel
from tests.chat.conftest import (
    chat_setup,
    collect,
    everything_spec,
    in_background,
    needs_npm,
    provider,
)
from tests.helpers.person import eventually
from tests.helpers.specs import toolbox_spec
from tests.servers.model_server import text, tool_calls

pytestmark = pytest.mark.slow  # talks to real servers or processes


async def _finish_gap(models, *specs, calls) -> float:
    """Seconds between the first and the last ToolCallFinished of two 1 s sleeps."""
    models.script(tool_calls(*calls), text("Both done."))
    async with chat_setup(*specs, providers=(provider(models),)) as s:
        chat = await s.host.new()
        finished: list[float] = []
        async for event in chat.send("sleep twice"):
            if isinstance(event, ToolCallFinished):
                assert event.ok, event
                finished.append(time.monotonic())
        assert len(finished) == 2
    return finished[1] - finished[0]


async def test_one_server_without_the_flag_runs_calls_one_at_a_time(models) -> None:
    box = toolbox_spec("box", trust=TrustLevel.FULL)
    sleep = ("box__sleep", {"seconds": 1.0})
    gap = await _finish_gap(models, box, calls=(sleep, sleep))
    assert gap >= 0.9  # the second started when the first ended


async def test_one_server_with_the_flag_runs_them_together(models) -> None:
    box = toolbox_spec("box", trust=TrustLevel.FULL, supports_parallel_tool_calls=True)
    sleep = ("box__sleep", {"seconds": 1.0})
    gap = await _finish_gap(models, box, calls=(sleep, sleep))
    assert gap < 0.5


async def test_two_servers_run_together_without_the_flag(models) -> None:
    a = toolbox_spec("a", trust=TrustLevel.FULL)
    b = toolbox_spec("b", trust=TrustLevel.FULL)
    gap = await _finish_gap(
        models, a, b, calls=(("a__sleep", {"seconds": 1.0}), ("b__sleep", {"seconds": 1.0}))
    )
    assert gap < 0.5


async def test_stop_cancels_the_call_on_the_server_and_keeps_the_partial_answer(models) -> None:
    models.script(
        {"text": "Starting the job.", "tool_calls": [{"name": "box__hang", "arguments": {}}]}
    )
    async with chat_setup(
        toolbox_spec("box", trust=TrustLevel.FULL), providers=(provider(models),)
    ) as s:
        chat = await s.host.new()
        task, seen = in_background(chat.send("go"))
        await eventually(lambda: any(isinstance(e, ToolCallStarted) for e in seen))
        await asyncio.sleep(0.3)
        assert chat.stop()
        await asyncio.wait_for(task, 10)
        conn = s.hub.connection("box")
        await eventually(lambda: "hang cancelled" in conn.log.lines, what="server-side cancel")
        [finished] = [e for e in seen if isinstance(e, ToolCallFinished)]
        assert finished.outcome == "cancelled"
        assert isinstance(seen[-1], TurnFinished) and seen[-1].stop_reason == "stopped"
        answer = chat.messages[-1]
        assert answer.status == "stopped" and answer.text == "Starting the job."
        assert answer.tool_calls[0].outcome == "cancelled"
        stored = await s.host.store.load(chat.id)
        assert stored.messages[-1].status == "stopped"
        assert stored.messages[-1].tool_calls[0].outcome == "cancelled"
        # the conversation goes on: the next turn sees the cancelled call
        models.script(text("Stopped as you asked."))
        run = await collect(chat.send("ok"))
        assert run.text == "Stopped as you asked."
        tool = [m for m in models.requests[-1].body["messages"] if m["role"] == "tool"]
        assert "stopped the turn" in tool[0]["content"]


@needs_npm
async def test_stop_during_a_long_running_operation_by_cancelling_the_task(models) -> None:
    models.script(
        {
            "tool_calls": [
                {
                    "name": "everything__trigger-long-running-operation",
                    "arguments": {"duration": 30, "steps": 30},
                }
            ]
        }
    )
    async with chat_setup(everything_spec(), providers=(provider(models),)) as s:
        chat = await s.host.new()
        task, seen = in_background(chat.send("run the long job"))
        await eventually(
            lambda: any(isinstance(e, ToolCallProgress) for e in seen), what="progress"
        )
        started = time.monotonic()
        task.cancel()  # what a face does when the person presses Stop
        await asyncio.gather(task, return_exceptions=True)
        assert time.monotonic() - started < 5
        assert not chat.busy
        stored = await s.host.store.load(chat.id)
        assert stored.messages[-1].status == "stopped"
        assert stored.messages[-1].tool_calls[0].outcome == "cancelled"
        # the server is still usable (the cancelled request did not wedge the session)
        models.script(
            {"tool_calls": [{"name": "everything__get-sum", "arguments": {"a": 1, "b": 2}}]},
            text("3"),
        )
        run = await collect(chat.send("1+2"))
        assert run.of(ToolCallFinished)[0].ok
