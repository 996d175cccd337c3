"""The tasks extension against a real SDK server (tests/servers/tasking.py): a call that
becomes a task is polled to its result with its status, input goes through the Prompter
and tasks/update, cancelling the call sends tasks/cancel, a task survives the client's
restart, and servers without tasks are unaffected."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import pytest

from portico.config.model import Protocol
from portico.policy.elicitation import ElicitationPolicy
from portico.prompts import ElicitationAnswer
from portico.runtime.connection import Connection
from portico.runtime.events import EventBus, Status, TaskChanged
from portico.runtime.hooks import ConnectionHooks
from portico.runtime.task_events import TaskCancelled, TaskGone, TaskUpdate
from tests.helpers.calls import calling
from tests.helpers.person import ScriptedPerson
from tests.helpers.servers import RunningServer, start_tasking, stop_server
from tests.helpers.specs import tasking_spec

from .conftest import Recorder

pytestmark = pytest.mark.slow  # real servers


@pytest.fixture(scope="module")
def tasking_http() -> Iterator[RunningServer]:
    server = start_tasking("--poll-ms", "40")
    yield server
    stop_server(server)


async def _running(conn: Connection) -> Connection:
    await conn.start()
    state = await conn.wait_settled(60)
    assert state.status is Status.RUNNING, state
    return conn


async def _task_log(conn: Connection) -> dict[str, list[object]]:
    result = await conn.call_tool("task_log", {})
    return json.loads(result.content[0].text)


async def test_a_long_task_is_polled_to_its_result_with_status_and_progress(
    bus: EventBus, events: Recorder
) -> None:
    conn = await _running(Connection(tasking_spec("--poll-ms", "40"), bus=bus))
    heard: list[TaskUpdate] = []
    progress: list[str | None] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append(message)

    try:
        assert conn.protocol_version == "2026-07-28"
        result = await conn.call_tool(
            "slow_compute", {"seconds": 0.6, "steps": 3}, context=calling(on_progress, heard.append)
        )
        assert result.content[0].text == "computed 3 steps"
        assert heard[0].status == "working" and heard[0].polls == 0
        assert heard[-1].status == "completed"
        messages = [u.message for u in heard]
        for step in ("step 1 of 3", "step 2 of 3", "step 3 of 3"):
            assert step in messages
        assert "task working… — step 2 of 3" in progress
        assert progress[0] == "task working…"
        # Published as runtime events too (the Log and any face can follow them).
        published = [e.update for e in events.events if isinstance(e, TaskChanged)]
        assert [u.status for u in published] == [u.status for u in heard]
        # The server's poll interval is honoured: 0.6 s at 40 ms is at most ~16 polls.
        (status, gets) = (await _task_log(conn))[heard[0].task_id]
        assert status == "completed"
        assert 3 <= int(gets) <= 20, gets  # type: ignore[call-overload]
    finally:
        await conn.stop()


async def test_tool_errors_complete_and_protocol_errors_fail() -> None:
    conn = await _running(Connection(tasking_spec()))
    try:
        broke = await conn.call_tool("failing_job", {})
        assert broke.is_error and broke.content[0].text == "the job broke: disk full"
        with pytest.raises(Exception, match="the worker crashed"):
            await conn.call_tool("protocol_error_job", {})
    finally:
        await conn.stop()


async def test_cancelling_the_call_cancels_the_task_on_the_server() -> None:
    conn = await _running(Connection(tasking_spec()))
    heard: list[TaskUpdate] = []
    try:
        call = asyncio.ensure_future(
            conn.call_tool("slow_compute", {"seconds": 30}, context=calling(on_task=heard.append))
        )
        async with asyncio.timeout(10):
            while not any(u.polls >= 1 for u in heard):  # noqa: ASYNC110
                await asyncio.sleep(0.02)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        assert heard[-1].status == "cancelled"
        task_id = heard[0].task_id
        async with asyncio.timeout(10):
            while (await _task_log(conn))[task_id][0] != "cancelled":  # noqa: ASYNC110
                await asyncio.sleep(0.05)
    finally:
        await conn.stop()


async def test_input_required_goes_through_the_prompter_and_tasks_update() -> None:
    person = ScriptedPerson(elicit=[ElicitationAnswer("accept", {"ok": False})])
    hooks = ConnectionHooks(elicitation_callback=ElicitationPolicy(person).callback)
    conn = await _running(Connection(tasking_spec(), hooks=hooks))
    heard: list[TaskUpdate] = []
    try:
        result = await conn.call_tool(
            "confirm_job", {"question": "Deploy now?"}, context=calling(on_task=heard.append)
        )
        assert result.content[0].text == 'answer accept {"ok": false}'
        (asked,) = person.requests("elicit")
        assert asked.message == "Deploy now?" and asked.server == "tasking"
        statuses = [u.status for u in heard]
        assert "input_required" in statuses
        assert statuses[-1] == "completed"
        assert statuses.index("input_required") < len(statuses) - 1
    finally:
        await conn.stop()


async def test_a_task_left_running_at_shutdown_is_followed_by_the_next_client(
    tasking_http: RunningServer,
) -> None:
    spec = tasking_spec(url=tasking_http.url)
    first = await _running(Connection(spec))
    heard: list[TaskUpdate] = []
    call = asyncio.ensure_future(
        first.call_tool("slow_compute", {"seconds": 1.5}, context=calling(on_task=heard.append))
    )
    async with asyncio.timeout(10):
        while not heard:  # noqa: ASYNC110
            await asyncio.sleep(0.02)
    first.tasks.detach = True  # what Hub.close() does when the app quits
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    await first.stop()
    task_id = heard[0].task_id

    second = await _running(Connection(spec))
    resumed: list[TaskUpdate] = []
    try:
        result = await second.follow_task(
            "slow_compute", task_id, context=calling(on_task=resumed.append)
        )
        assert result.content[0].text == "computed 5 steps"
        assert resumed[-1].status == "completed" and resumed[-1].task_id == task_id
        assert (await _task_log(second))[task_id][0] == "completed"  # never cancelled
    finally:
        await second.stop()


async def test_an_expired_task_says_so() -> None:
    conn = await _running(Connection(tasking_spec("--ttl-ms", "200")))
    heard: list[TaskUpdate] = []
    try:
        result = await conn.call_tool(
            "slow_compute", {"seconds": 0.05, "steps": 1}, context=calling(on_task=heard.append)
        )
        assert result.content[0].text == "computed 1 steps"
        await asyncio.sleep(0.4)
        with pytest.raises(TaskGone, match=r"no longer has task .* it may have expired"):
            await conn.follow_task("slow_compute", heard[0].task_id)
    finally:
        await conn.stop()


@pytest.mark.parametrize(
    ("extra", "protocol"),
    [(("--no-tasks",), Protocol.AUTO), ((), Protocol.LEGACY)],
    ids=["server-without-tasks", "2025-11-25-session"],
)
async def test_without_the_extension_calls_run_as_before(
    extra: tuple[str, ...], protocol: Protocol, bus: EventBus, events: Recorder
) -> None:
    conn = await _running(Connection(tasking_spec(*extra, protocol=protocol), bus=bus))
    heard: list[TaskUpdate] = []
    try:
        result = await conn.call_tool(
            "slow_compute", {"seconds": 0.1, "steps": 2}, context=calling(on_task=heard.append)
        )
        assert result.content[0].text == "computed 2 steps"
        assert heard == []
        assert not any(isinstance(e, TaskChanged) for e in events.events)
        with pytest.raises(Exception, match=r"no longer offers tasks|no longer has task"):
            await conn.follow_task("slow_compute", "no-such-task")
    finally:
        await conn.stop()


async def test_a_task_the_server_cancels_ends_the_call_with_a_clear_error() -> None:
    conn = await _running(Connection(tasking_spec()))
    heard: list[TaskUpdate] = []
    try:
        call = asyncio.ensure_future(
            conn.call_tool("slow_compute", {"seconds": 30}, context=calling(on_task=heard.append))
        )
        async with asyncio.timeout(10):
            while not heard:  # noqa: ASYNC110
                await asyncio.sleep(0.02)
        # Another client (here: the raw wire through this session) cancels it.
        from portico.runtime.tasks import cancel_task

        assert conn.link.client is not None
        await cancel_task(conn.link.client.session, heard[0].task_id)
        with pytest.raises(TaskCancelled, match="was cancelled: cancelled at the client"):
            await call
    finally:
        await conn.stop()
