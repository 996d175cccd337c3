"""Resource subscriptions: updates arrive as ResourceUpdated, on both protocol eras, and
the subscription is made again after a reconnect."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import pytest

from portico.config.model import Protocol
from portico.runtime.connection import Connection
from portico.runtime.events import EventBus, ResourceUpdated, Status
from tests.helpers.specs import make_spec

from .conftest import Recorder

pytestmark = pytest.mark.slow  # real servers, processes or the app

CHATTY = Path(__file__).resolve().parents[1] / "servers" / "chatty.py"
URI = "memo://counter"


async def _updates(events: Recorder, count: int) -> None:
    async with asyncio.timeout(20):
        while sum(isinstance(e, ResourceUpdated) for e in events.events) < count:  # noqa: ASYNC110
            await asyncio.sleep(0.05)


async def _status(conn: Connection, wanted: Status) -> None:
    async with asyncio.timeout(90):
        while conn.state.status is not wanted:
            await conn._life.changed()


@pytest.mark.parametrize("protocol", [Protocol.LEGACY, Protocol.AUTO])
async def test_a_subscribed_resource_reports_updates_and_survives_a_reconnect(
    protocol: Protocol, bus: EventBus, events: Recorder
) -> None:
    spec = make_spec(
        "chatty",
        "stdio",
        command=sys.executable,
        args=(str(CHATTY), "stdio"),
        protocol=protocol,
        connect_timeout=80.0,
    )
    conn = Connection(spec, bus=bus, cooldown_base=0.2)
    await conn.start()
    try:
        assert (await conn.wait_settled(90)).status is Status.RUNNING
        await conn.subscribe(URI)
        await conn.call_tool("bump", {})
        await _updates(events, 1)
        assert [e for e in events.events if isinstance(e, ResourceUpdated)] == [
            ResourceUpdated("chatty", URI)
        ]
        pid = conn.pid
        assert pid is not None
        os.kill(pid, signal.SIGKILL)  # a new process: the subscription must be made again
        await _status(conn, Status.COOLDOWN)
        await _status(conn, Status.RUNNING)
        await conn.call_tool("bump", {})
        await _updates(events, 2)
        await conn.unsubscribe(URI)
        await conn.call_tool("bump", {})
        await asyncio.sleep(0.5)
        assert sum(isinstance(e, ResourceUpdated) for e in events.events) == 2
    finally:
        await conn.stop()
