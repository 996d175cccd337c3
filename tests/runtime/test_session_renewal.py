"""Issue 26, item 1: a 2025-11-25 Streamable HTTP session is renewed after its server
restarts. The restarted server answers the old ``Mcp-Session-Id`` with 404 (the SDK's
server) or 400 "No valid session ID provided" (server-everything); the connection starts a
new session (initialize, no session id) and the failed call, which the answer proves was
never processed, goes out once more and succeeds. Before, the status stayed Running and
every call failed with "Session not found"."""

from __future__ import annotations

import asyncio
import os
import subprocess
from collections.abc import Iterator

import pytest

from portico.config.model import Protocol
from portico.runtime.connection import Connection
from portico.runtime.events import EventBus, Status

from .conftest import (
    EVERYTHING,
    NODE,
    Recorder,
    eventually,
    free_port,
    make_spec,
    start_toolbox,
    stop_server,
    wait_port,
)

pytestmark = pytest.mark.slow  # real servers and processes


def _text(result: object) -> str:
    return " ".join(getattr(part, "text", "") for part in getattr(result, "content", []))


async def test_a_restarted_server_gets_a_new_session_and_the_call_goes_through(
    bus: EventBus, events: Recorder
) -> None:
    server = start_toolbox("http")
    spec = make_spec("renewing", "http", url=server.url, protocol=Protocol.LEGACY)
    conn = Connection(spec, bus=bus)
    await conn.start()
    try:
        assert (await conn.wait_settled(60)).status is Status.RUNNING
        assert _text(await conn.call_tool("echo", {"text": "before"})) == "echo: before"
        generation = conn.generation
        server.proc.kill()
        server.proc.wait(10)
        server = start_toolbox("http", port=server.port)  # same address, sessions forgotten
        result = await conn.call_tool("echo", {"text": "after"})
        assert _text(result) == "echo: after"
        assert conn.state.status is Status.RUNNING
        assert conn.generation != generation  # a new session (approvals bound to it end)
        assert any("no longer knows this session" in line for line in conn.log.lines)
        statuses = events.statuses()
        first = statuses.index(Status.RUNNING)
        assert Status.CONNECTING in statuses[first:]  # the person saw the reconnect
        assert Status.FAILED not in statuses
    finally:
        await conn.stop()
        server.proc.kill()
        server.proc.wait(10)


async def test_a_session_the_server_expires_is_renewed_before_the_next_call(
    bus: EventBus, events: Recorder
) -> None:
    # The server stays up and forgets the session; its GET stream, opened again by the
    # SDK, hears the 404 first: the status shows the reconnect with no call made.
    server = start_toolbox("http")
    spec = make_spec("expiring", "http", url=server.url, protocol=Protocol.LEGACY)
    conn = Connection(spec, bus=bus)
    await conn.start()
    try:
        assert (await conn.wait_settled(60)).status is Status.RUNNING
        generation = conn.generation
        assert _text(await conn.call_tool("expire_sessions", {})) == "expiring"

        def reconnected() -> bool:
            statuses = events.statuses()
            after = statuses[statuses.index(Status.RUNNING) + 1 :]
            return after[-2:] == [Status.CONNECTING, Status.RUNNING]

        await eventually(reconnected, 30, "Connecting, then Running again")
        assert conn.generation != generation
        assert _text(await conn.call_tool("echo", {"text": "new"})) == "echo: new"
    finally:
        await conn.stop()
        stop_server(server)


async def test_a_call_right_after_the_expiry_goes_through_once(bus: EventBus) -> None:
    server = start_toolbox("http")
    spec = make_spec("expired", "http", url=server.url, protocol=Protocol.LEGACY)
    conn = Connection(spec, bus=bus)
    await conn.start()
    try:
        assert (await conn.wait_settled(60)).status is Status.RUNNING
        await conn.call_tool("expire_sessions", {"delay": 0.1})
        await asyncio.sleep(0.4)  # forgotten, and before the GET stream tries again (1 s)
        generation = conn.generation
        assert _text(await conn.call_tool("echo", {"text": "once more"})) == "echo: once more"
        assert conn.generation != generation  # sent again on a new session
        assert conn.state.status is Status.RUNNING
    finally:
        await conn.stop()
        stop_server(server)


def _everything(port: int) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [str(NODE), str(EVERYTHING), "streamableHttp"],
        env={**os.environ, "PORT": str(port)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wait_port(port, proc)
    return proc


@pytest.fixture
def everything_port() -> Iterator[int]:
    yield free_port()


@pytest.mark.npm
@pytest.mark.skipif(not EVERYTHING.exists(), reason="npm peers not installed")
async def test_a_400_for_an_unknown_session_renews_it_too(
    bus: EventBus, everything_port: int
) -> None:
    proc = _everything(everything_port)
    url = f"http://127.0.0.1:{everything_port}/mcp"
    conn = Connection(make_spec("everything", "http", url=url, protocol=Protocol.LEGACY), bus=bus)
    await conn.start()
    try:
        assert (await conn.wait_settled(60)).status is Status.RUNNING
        proc.kill()
        proc.wait(10)
        proc = _everything(everything_port)
        result = await conn.call_tool("echo", {"message": "still here"})
        assert "still here" in _text(result)
        prompts = await conn.list_prompts()  # later requests use the new session
        assert prompts
    finally:
        await conn.stop()
        proc.kill()
        proc.wait(10)
