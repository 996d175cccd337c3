"""Lazy start from the schema cache, recycling, trust gate, sign-in parking, restart."""

from __future__ import annotations

import asyncio
import os

import httpx2
import pytest

from portico.config.model import Protocol
from portico.runtime import schema_cache
from portico.runtime.connection import Connection
from portico.runtime.errors import NeedsAuth
from portico.runtime.events import AuthRequired, EventBus, Status
from portico.runtime.hooks import ConnectionHooks, TrustVerdict

from .conftest import Recorder, eventually, failing_spec, make_spec, toolbox_spec

pytestmark = pytest.mark.slow  # talks to real servers or processes


async def test_lazy_without_cache_starts_eagerly_then_registers_from_cache(
    bus: EventBus, events: Recorder
) -> None:
    spec = toolbox_spec("lazybox", lazy=True, protocol=Protocol.LEGACY)
    assert schema_cache.load(spec) is None
    first = Connection(spec, bus=bus)
    await first.start()
    try:
        assert (await first.wait_settled(30)).status is Status.RUNNING
        tool_names = [t.name for t in first.tools]
    finally:
        await first.stop()
    cached = schema_cache.load(spec)
    assert cached is not None and [t.name for t in cached.tools] == tool_names

    events.events.clear()
    second = Connection(spec, bus=bus)
    await second.start()
    try:
        state = await second.wait_settled(10)
        assert state.status is Status.LAZY
        assert state.tool_count == len(tool_names)
        assert [t.name for t in second.tools] == tool_names
        assert second.from_cache and second.pid is None
        # the first call starts it transparently
        result = await second.call_tool("echo", {"text": "wake up"})
        assert result.content[0].text == "echo: wake up"
        assert second.state.status is Status.RUNNING
        assert second.pid is not None
        assert events.statuses() == [Status.LAZY, Status.CONNECTING, Status.RUNNING]
    finally:
        await second.stop()


async def test_cache_is_keyed_by_config_digest(bus: EventBus) -> None:
    spec = toolbox_spec("keyed", lazy=True, protocol=Protocol.LEGACY)
    conn = Connection(spec, bus=bus)
    await conn.start()
    await conn.wait_settled(30)
    await conn.stop()
    changed = toolbox_spec("keyed", lazy=True, protocol=Protocol.LEGACY, timeout=12.0)
    assert schema_cache.load(spec) is not None
    assert schema_cache.load(changed) is None  # a changed config never reads a stale entry


async def test_idle_recycling_restarts_on_next_call(bus: EventBus, events: Recorder) -> None:
    spec = toolbox_spec("idler", idle_timeout_seconds=1.0, protocol=Protocol.LEGACY)
    conn = Connection(spec, bus=bus)
    await conn.start()
    try:
        await eventually(lambda: conn.pid is not None, within=30, what="running")
        first_pid = conn.pid
        await eventually(lambda: conn.state.status is Status.LAZY, what="recycled")
        count = len(conn.tools)
        assert count >= 10
        assert events.statuses()[:3] == [Status.CONNECTING, Status.RUNNING, Status.LAZY]
        await eventually(lambda: conn.pid is None, what="process gone")
        assert len(conn.tools) == count  # tools stay registered
        assert any("idle_timeout_seconds" in line for line in conn.log.lines)
        result = await conn.call_tool("pid", {})
        assert int(result.content[0].text) != first_pid
        assert conn.state.status is Status.RUNNING
    finally:
        await conn.stop()


async def test_idle_timer_waits_for_inflight_calls(bus: EventBus) -> None:
    spec = toolbox_spec("busy", idle_timeout_seconds=0.3, protocol=Protocol.LEGACY)
    conn = Connection(spec, bus=bus)
    await conn.start()
    try:
        assert (await conn.wait_settled(30)).status is Status.RUNNING
        result = await conn.call_tool("sleep", {"seconds": 1.0})
        assert result.content[0].text == "slept 1.0"
    finally:
        await conn.stop()


async def test_max_lifetime_recycles(bus: EventBus) -> None:
    spec = toolbox_spec("aging", max_lifetime_seconds=0.5, protocol=Protocol.LEGACY)
    conn = Connection(spec, bus=bus)
    await conn.start()
    try:
        await eventually(lambda: conn.state.status is Status.LAZY, what="recycled")
        assert any("max_lifetime_seconds" in line for line in conn.log.lines)
    finally:
        await conn.stop()


async def test_stop_while_recycling_still_stops_the_process(bus: EventBus) -> None:
    """A recycled connection is LAZY before its old process is shut down, and stop()
    cancels a LAZY owner: the shutdown still runs to its end (the process is gone when
    stop() returns), not cut off with the process running and its pipes open. The
    server stays a minute after its stdin ends: only the shutdown's TERM ends it."""
    spec = toolbox_spec(
        "aging", "--linger", "60", max_lifetime_seconds=0.5, protocol=Protocol.LEGACY
    )
    conn = Connection(spec, bus=bus)
    await conn.start()
    try:
        await eventually(lambda: conn.pid is not None, what="a process")
        pid = conn.pid
        assert pid is not None
        await eventually(lambda: conn.state.status is Status.LAZY, what="recycled")
    finally:
        await conn.stop()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


async def test_trust_gate_parks_until_retry(bus: EventBus, events: Recorder) -> None:
    allowed = False

    async def gate(spec: object, *, asking: object = None) -> TrustVerdict:
        return TrustVerdict(allowed=allowed, reasons=("new server: review it",))

    conn = Connection(
        toolbox_spec("gated", protocol=Protocol.LEGACY),
        bus=bus,
        hooks=ConnectionHooks(trust_gate=gate),
    )
    await conn.start()
    try:
        state = await conn.wait_settled(10)
        assert state.status is Status.AWAITING_TRUST
        assert state.error == "new server: review it"
        assert conn.pid is None
        allowed = True
        await conn.retry_now()
        await eventually(lambda: conn.state.status is Status.RUNNING, what="running")
    finally:
        await conn.stop()


async def test_needs_auth_parks(bus: EventBus, events: Recorder) -> None:
    async def auth_for(spec: object, *, interactive: bool) -> None:
        assert interactive is False
        raise NeedsAuth("sign in to notion: run `portico mcp login notion`")

    spec = make_spec("notion", "http", url="http://127.0.0.1:9/mcp")
    conn = Connection(spec, bus=bus, hooks=ConnectionHooks(auth_for=auth_for))
    await conn.start()
    try:
        state = await conn.wait_settled(10)
        assert state.status is Status.NEEDS_AUTH
        assert "portico mcp login notion" in (state.error or "")
        assert any(isinstance(e, AuthRequired) and e.server == "notion" for e in events.events)
    finally:
        await conn.stop()


async def test_restart_gives_a_new_process(bus: EventBus) -> None:
    conn = Connection(toolbox_spec("again", protocol=Protocol.LEGACY), bus=bus)
    await conn.start()
    try:
        assert (await conn.wait_settled(30)).status is Status.RUNNING
        before = conn.pid
        await conn.restart()
        assert (await conn.wait_settled(30)).status is Status.RUNNING
        assert conn.pid != before
    finally:
        await conn.stop()


async def test_stop_while_connecting_is_prompt(bus: EventBus) -> None:
    spec = toolbox_spec("stopper", "--start-delay", "20", connect_timeout=60)
    conn = Connection(spec, bus=bus)
    await conn.start()
    await asyncio.sleep(0.3)
    assert conn.state.status is Status.CONNECTING
    async with asyncio.timeout(15):
        await conn.stop()
    assert conn.state.status is Status.STOPPED


@pytest.mark.parametrize("protocol", [Protocol.LEGACY, Protocol.AUTO])
async def test_one_failing_server_does_not_disturb_another(
    bus: EventBus, protocol: Protocol
) -> None:
    good = Connection(toolbox_spec("good", protocol=protocol), bus=bus)
    bad = Connection(failing_spec("bad", 2), bus=bus, cooldown_base=60)
    await asyncio.gather(good.start(), bad.start())
    try:
        states = await asyncio.gather(good.wait_settled(30), bad.wait_settled(30))
        assert [s.status for s in states] == [Status.RUNNING, Status.COOLDOWN]
        result = await good.call_tool("echo", {"text": "fine"})
        assert result.content[0].text == "echo: fine"
    finally:
        await asyncio.gather(good.stop(), bad.stop())


class _RefusingAuth(httpx2.Auth):
    """An auth flow that lets `allow` requests through, then needs a sign-in."""

    def __init__(self, allow: int) -> None:
        self.allow = allow

    async def async_auth_flow(self, request: httpx2.Request):  # type: ignore[override]
        if self.allow <= 0:
            raise NeedsAuth("the grant was refused: run `portico mcp login web`")
        self.allow -= 1
        yield request


@pytest.mark.parametrize("allow", [0, 12])
async def test_needs_auth_from_inside_the_transport(
    bus: EventBus, events: Recorder, toolbox_http, allow: int
) -> None:
    auth = _RefusingAuth(allow)

    async def auth_for(spec: object, *, interactive: bool) -> httpx2.Auth:
        return auth

    spec = make_spec("web", "http", url=toolbox_http.url, protocol=Protocol.LEGACY)
    conn = Connection(spec, bus=bus, hooks=ConnectionHooks(auth_for=auth_for))
    await conn.start()
    try:
        state = await conn.wait_settled(30)
        if allow:  # signed in at first; a later request finds the grant refused
            assert state.status is Status.RUNNING, state.error
            with pytest.raises(NeedsAuth, match="portico mcp login web"):
                for _ in range(20):
                    await conn.call_tool("echo", {"text": "x"})
            state = conn.state
        assert state.status is Status.NEEDS_AUTH
        assert "portico mcp login web" in (state.error or "")
        assert any(isinstance(e, AuthRequired) for e in events.events)
    finally:
        await conn.stop()
