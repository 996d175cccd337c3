"""Server log notifications reach the server's log with their level and time."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from portico.config.model import Protocol
from portico.runtime.connection import Connection
from portico.runtime.events import EventBus, LogLine, Status
from tests.helpers.specs import make_spec

from .conftest import Recorder

pytestmark = pytest.mark.slow  # real servers, processes or the app

CHATTY = Path(__file__).resolve().parents[1] / "servers" / "chatty.py"


@pytest.mark.parametrize("protocol", [Protocol.LEGACY, Protocol.AUTO])
async def test_notifications_message_become_mcp_log_lines(
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
    conn = Connection(spec, bus=bus)
    await conn.start()
    try:
        assert (await conn.wait_settled(90)).status is Status.RUNNING
        before = time.time()
        result = await conn.call_tool("shout", {"text": "hi"})
        assert "shouted hi" in str(result.content)
        await conn.call_tool("whisper", {"text": "low"})
    finally:
        await conn.stop()
    lines = [e for e in events.events if isinstance(e, LogLine) and e.stream == "mcp"]
    seen = [(line.level, line.text) for line in lines]
    assert seen[:2] == [("info", "chatty: said hi"), ("warning", "chatty: careful: hi")]
    if protocol is Protocol.AUTO:  # 2026: only what the requests opted in to (info and up)
        assert ("debug", "chatty: psst low") not in seen
    assert all(line.time >= before for line in lines)
    assert "[warning] chatty: careful: hi" in conn.log.lines
