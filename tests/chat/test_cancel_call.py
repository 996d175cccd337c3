"""Cancelling one tool call: only that call stops (its server is told), the model reads
that the person cancelled it, and the turn goes on with the other calls and rounds."""

from __future__ import annotations

import asyncio

import pytest

from portico.chat.events import ToolCallFinished, ToolCallStarted, TurnFinished
from portico.config.model import TrustLevel
from tests.chat.conftest import chat_setup, in_background, provider
from tests.helpers.person import eventually
from tests.helpers.specs import toolbox_spec
from tests.servers.model_server import text, tool_calls

pytestmark = pytest.mark.slow  # talks to real servers or processes


async def test_cancel_one_call_lets_the_other_finish_and_the_turn_go_on(models) -> None:
    box = toolbox_spec("box", trust=TrustLevel.FULL, supports_parallel_tool_calls=True)
    models.script(
        tool_calls(("box__hang", {}), ("box__sleep", {"seconds": 1.0})),
        text("The sleep finished; you cancelled the other one."),
    )
    async with chat_setup(box, providers=(provider(models),)) as s:
        chat = await s.host.new()
        task, seen = in_background(chat.send("hang and sleep"))
        await eventually(lambda: len([e for e in seen if isinstance(e, ToolCallStarted)]) == 2)
        started = {e.tool: e.id for e in seen if isinstance(e, ToolCallStarted)}
        conn = s.hub.connection("box")
        await eventually(lambda: "hang started" in conn.log.lines, what="hang on the server")
        assert chat.cancel_call(started["hang"])
        assert not chat.cancel_call("no-such-call")
        await eventually(lambda: "hang cancelled" in conn.log.lines, what="server-side cancel")
        await asyncio.wait_for(task, 15)

        finished = {e.id: e for e in seen if isinstance(e, ToolCallFinished)}
        assert finished[started["hang"]].outcome == "cancelled"
        assert "person cancelled this call" in (finished[started["hang"]].error or "")
        assert finished[started["sleep"]].outcome == "ok"
        assert isinstance(seen[-1], TurnFinished) and seen[-1].stop_reason != "stopped"
        assert not chat.cancel_call(started["sleep"])  # finished calls cannot be cancelled

        answer = chat.messages[-1]
        assert answer.status == "complete"
        assert answer.text == "The sleep finished; you cancelled the other one."
        outcomes = {c.name: c.outcome for c in answer.tool_calls}
        assert outcomes == {"box__hang": "cancelled", "box__sleep": "ok"}
        # the model was told, in the next round of the same turn
        tool_msgs = [m for m in models.requests[-1].body["messages"] if m["role"] == "tool"]
        by_id = {m["tool_call_id"]: m["content"] for m in tool_msgs}
        assert "person cancelled this call" in by_id[started["hang"]]
        stored = await s.host.store.load(chat.id)
        assert {c.name: c.outcome for c in stored.messages[-1].tool_calls} == outcomes


async def test_cancel_the_only_call_of_a_round_goes_on_to_the_model(models) -> None:
    """A round of one call runs it in the turn's own task: cancelling that call must end
    only the call (the server is told), never the turn, and a later Stop still stops."""
    box = toolbox_spec("box", trust=TrustLevel.FULL)
    models.script(tool_calls(("box__hang", {})), text("You cancelled it."))
    async with chat_setup(box, providers=(provider(models),)) as s:
        chat = await s.host.new()
        task, seen = in_background(chat.send("hang"))
        await eventually(lambda: any(isinstance(e, ToolCallStarted) for e in seen))
        [call] = [e.id for e in seen if isinstance(e, ToolCallStarted)]
        conn = s.hub.connection("box")
        await eventually(lambda: "hang started" in conn.log.lines, what="hang on the server")
        assert chat.cancel_call(call)
        assert not chat.cancel_call(call)  # asked once is enough
        await eventually(lambda: "hang cancelled" in conn.log.lines, what="server-side cancel")
        await asyncio.wait_for(task, 15)

        [finished] = [e for e in seen if isinstance(e, ToolCallFinished)]
        assert finished.outcome == "cancelled"
        assert isinstance(seen[-1], TurnFinished) and seen[-1].stop_reason == "end_turn"
        assert chat.messages[-1].text == "You cancelled it."
        assert not chat.cancel_call(call)

        # the turn's task carries no cancellation left over: the next turn's Stop works
        models.script(tool_calls(("box__hang", {})), text("never read"))
        task, seen = in_background(chat.send("hang"))
        await eventually(lambda: any(isinstance(e, ToolCallStarted) for e in seen))
        assert chat.stop()
        await asyncio.wait_for(task, 15)
        assert isinstance(seen[-1], TurnFinished) and seen[-1].stop_reason == "stopped"
