"""A chat's tool call that the server answers with a task (tests/servers/tasking.py): its
status reaches the chat as events, its id is kept in the chat store, Stop cancels it on
the server, and after a restart (a new hub and host over the same store) the chat shows
the task again and fetches its result."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from portico.chat.events import ToolCallFinished, ToolCallProgress, ToolCallTask
from portico.config.model import TrustLevel
from tests.chat.conftest import chat_setup, collect, in_background, provider
from tests.helpers.person import eventually
from tests.helpers.servers import start_tasking, stop_server
from tests.helpers.specs import tasking_spec
from tests.servers.model_server import ModelServer, text, tool_call

pytestmark = pytest.mark.slow  # real servers


async def _server_log(hub: object, server: str = "tasking") -> dict[str, list[object]]:
    result = await hub.connection(server).call_tool("task_log", {})  # type: ignore[attr-defined]
    return json.loads(result.content[0].text)


async def test_a_task_call_reports_its_status_and_its_result_reaches_the_model(
    models: ModelServer, tmp_path: Path
) -> None:
    models.script(
        tool_call("tasking__slow_compute", {"seconds": 0.4, "steps": 2}), text("It is done.")
    )
    store = tmp_path / "chats.sqlite3"
    spec = tasking_spec(trust=TrustLevel.FULL)
    async with chat_setup(spec, providers=(provider(models),), store_path=store) as s:
        chat = await s.host.new()
        run = await collect(chat.send("compute"))
        tasks = run.of(ToolCallTask)
        assert tasks[0].status == "working" and tasks[-1].status == "completed"
        assert {t.message for t in tasks} >= {"step 1 of 2", "step 2 of 2"}
        assert any(
            (p.message or "").startswith("task working… — step") for p in run.of(ToolCallProgress)
        )
        (finished,) = run.of(ToolCallFinished)
        assert finished.outcome == "ok" and finished.result.text() == "computed 2 steps"
        assert "computed 2 steps" in json.dumps(models.requests[-1].body)
        call_id = finished.id
        assert chat.tasks[call_id].status == "completed"
        task_id = chat.tasks[call_id].task_id
        assert task_id == tasks[0].task_id
        conversation = chat.id
    async with chat_setup(spec, providers=(provider(models),), store_path=store) as s:
        again = await s.host.open(conversation)
        row = again.tasks[call_id]
        assert (row.server, row.tool, row.task_id, row.status) == (
            "tasking",
            "slow_compute",
            task_id,
            "completed",
        )


async def test_stop_cancels_the_task_on_the_server(models: ModelServer) -> None:
    models.script(tool_call("tasking__slow_compute", {"seconds": 30}))
    async with chat_setup(tasking_spec(trust=TrustLevel.FULL), providers=(provider(models),)) as s:
        chat = await s.host.new()
        turn, seen = in_background(chat.send("go"))
        await eventually(lambda: any(isinstance(e, ToolCallTask) for e in seen), 20, "a task")
        task_id = next(e for e in seen if isinstance(e, ToolCallTask)).task_id
        assert chat.stop()
        await asyncio.wait_for(turn, 20)
        states = [e.status for e in seen if isinstance(e, ToolCallTask)]
        assert states[-1] == "cancelled"

        async def cancelled() -> bool:
            return (await _server_log(s.hub))[task_id][0] == "cancelled"

        async with asyncio.timeout(10):
            while not await cancelled():  # noqa: ASYNC110
                await asyncio.sleep(0.05)


async def test_after_a_restart_the_chat_fetches_the_result_of_a_task_left_running(
    models: ModelServer, tmp_path: Path
) -> None:
    server = start_tasking("--poll-ms", "50")
    try:
        store = tmp_path / "chats.sqlite3"
        spec = tasking_spec(url=server.url, trust=TrustLevel.FULL)
        models.script(tool_call("tasking__slow_compute", {"seconds": 2.0}))
        async with chat_setup(spec, providers=(provider(models),), store_path=store) as s:
            chat = await s.host.new()
            turn, seen = in_background(chat.send("compute"))
            await eventually(lambda: any(isinstance(e, ToolCallTask) for e in seen), 20, "task")
            conversation = chat.id
            first = next(e for e in seen if isinstance(e, ToolCallTask))
            # the host closes with the turn running: the app quits
        await asyncio.wait_for(turn, 20)

        async with chat_setup(spec, providers=(provider(models),), store_path=store) as s:
            again = await s.host.open(conversation)
            row = again.tasks[first.id]
            assert row.task_id == first.task_id and row.status == "working"
            (call,) = [c for m in again.messages for c in m.tool_calls]
            assert call.outcome == "cancelled"  # the turn itself ended with the app
            record = await s.host.fetch_task(conversation, first.id)
            assert record.outcome == "ok" and record.result_text == "computed 5 steps"
            assert again.tasks[first.id].status == "completed"
            log = await _server_log(s.hub)
            assert log[first.task_id][0] == "completed"  # never cancelled
        async with chat_setup(spec, providers=(provider(models),), store_path=store) as s:
            (call,) = [c for m in (await s.host.open(conversation)).messages for c in m.tool_calls]
            assert (call.outcome, call.result_text) == ("ok", "computed 5 steps")
    finally:
        stop_server(server)
