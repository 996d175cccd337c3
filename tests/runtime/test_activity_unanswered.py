"""Issue 26, item 11: a cancelled call stayed "pending" in Activity for ever, and so did
the requests of a connection that crashed. A request that will never be answered ends:
``cancelled`` when its sender cancelled it, ``connection closed`` when the session ended
under it."""

from __future__ import annotations

import asyncio
import os
import signal

import pytest

from portico.config.model import Protocol
from portico.runtime.connection import Connection
from portico.runtime.events import EventBus, Status
from tests.helpers.person import eventually
from tests.helpers.specs import toolbox_spec

pytestmark = pytest.mark.slow  # a real stdio server


def _calls(conn: Connection, method: str = "tools/call") -> list[str]:
    return [e.status for e in conn.activity.snapshot() if e.method == method]


async def test_a_cancelled_call_ends_as_cancelled(bus: EventBus) -> None:
    conn = Connection(toolbox_spec("box", protocol=Protocol.LEGACY), bus=bus)
    await conn.start()
    try:
        assert (await conn.wait_settled(30)).status is Status.RUNNING
        call = asyncio.create_task(conn.call_tool("hang", {}, timeout=60))
        await eventually(lambda: "hang started" in conn.log.lines, what="hang on the server")
        assert _calls(conn) == ["pending"]
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        await eventually(lambda: _calls(conn) == ["cancelled"], what="the call ended")
    finally:
        await conn.stop()


async def test_a_crash_ends_the_requests_it_left_open(bus: EventBus, allow_logs) -> None:  # type: ignore[no-untyped-def]
    allow_logs(r"box")
    conn = Connection(toolbox_spec("box", protocol=Protocol.LEGACY), bus=bus, cooldown_base=60)
    await conn.start()
    try:
        assert (await conn.wait_settled(30)).status is Status.RUNNING
        call = asyncio.create_task(conn.call_tool("hang", {}, timeout=60))
        await eventually(lambda: "hang started" in conn.log.lines, what="hang on the server")
        assert conn.pid is not None
        os.kill(conn.pid, signal.SIGKILL)
        with pytest.raises(Exception):  # noqa: B017 - the call fails with the connection
            await call
        await eventually(lambda: "pending" not in _calls(conn), what="no request left pending")
        assert _calls(conn) == ["connection closed"]
        assert all(e.status != "pending" for e in conn.activity.snapshot())
    finally:
        await conn.stop()
