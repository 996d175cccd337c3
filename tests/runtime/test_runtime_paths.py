"""Paths the other runtime tests leave out: cooldown resets, OS proxy settings, lazy HTTP,
the watcher's debounce, and the exact progress cap."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

import pytest

from portico.config.model import Config, Protocol, ServerSpec
from portico.paths import paths
from portico.runtime import schema_cache
from portico.runtime.connection import Connection
from portico.runtime.errors import CallTimeout
from portico.runtime.events import Event, EventBus, Status, StatusChanged
from portico.runtime.hooks import ConnectionHooks
from portico.runtime.hub import Hub
from portico.runtime.transports.proxies import ProxySettings
from portico.runtime.watcher import ConfigWatcher
from tests.helpers.calls import calling

from .conftest import Recorder, RunningServer, eventually, failing_spec, make_spec, toolbox_spec

pytestmark = pytest.mark.slow  # talks to real servers or processes

BASE = 0.25  # cooldown base for these tests: 0.25, 0.5, 1.0, 2.0 ...


class CooldownDelays:
    """The delay of each Cooldown as published: retry_at minus the time it was announced."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    def __call__(self, event: Event) -> None:
        if isinstance(event, StatusChanged) and event.state.status is Status.COOLDOWN:
            assert event.state.retry_at is not None
            self.delays.append(event.state.retry_at - time.time())


async def test_retry_now_resets_the_cooldown_to_its_base(bus: EventBus) -> None:
    delays = CooldownDelays()
    bus.subscribe(delays)
    conn = Connection(failing_spec("flaky"), bus=bus, cooldown_base=BASE, cooldown_max=60)
    await conn.start()
    try:
        await eventually(lambda: len(delays.delays) >= 3, what="three cooldowns")
        for delay, want in zip(delays.delays[:3], (BASE, 2 * BASE, 4 * BASE), strict=True):
            assert abs(delay - want) < 0.1, delays.delays  # doubling
        seen = len(delays.delays)
        await conn.retry_now()  # the pending delay had grown to 1.0 (then 2.0)
        await eventually(lambda: len(delays.delays) > seen, what="the cooldown after retry_now")
        assert abs(delays.delays[seen] - BASE) < 0.1
    finally:
        await conn.stop()


async def test_a_config_change_resets_the_cooldown(bus: EventBus) -> None:
    delays = CooldownDelays()
    bus.subscribe(delays)

    def factory(spec: ServerSpec, bus: EventBus, hooks: ConnectionHooks) -> Connection:
        return Connection(spec, bus=bus, hooks=hooks, cooldown_base=BASE, cooldown_max=60)

    async with Hub(bus, connection_factory=factory) as hub:
        await hub.apply(Config(servers=(failing_spec("flaky", code=4),)))
        await eventually(lambda: len(delays.delays) >= 3, what="three cooldowns")
        assert delays.delays[2] > 0.9  # grown: 0.25, 0.5, 1.0
        seen = len(delays.delays)
        await hub.apply(Config(servers=(failing_spec("flaky", code=5),)))
        await eventually(lambda: len(delays.delays) > seen, what="the cooldown after the change")
        assert abs(delays.delays[seen] - BASE) < 0.1
        assert "code 5" in (hub.connection("flaky").state.error or "")


def test_os_proxy_settings_are_used_when_the_environment_names_none() -> None:
    calls: list[int] = []

    def os_settings() -> dict[str, str]:
        calls.append(1)
        return {
            "http": "proxy.corp:3128",
            "https": "socks://proxy.corp:1080",
            "no": "intranet.corp,10.0.0.0/8",
        }

    settings = ProxySettings.from_environ({}, use_os_settings=True, os_proxies=os_settings)
    assert calls == [1]
    assert settings.proxy_for("http", "api.example.com", 80) == "http://proxy.corp:3128"
    assert settings.proxy_for("https", "api.example.com", 443) == "socks5://proxy.corp:1080"
    assert settings.proxy_for("https", "wiki.intranet.corp", 443) is None
    assert settings.proxy_for("https", "10.1.2.3", 443) is None

    # the environment wins, and switched off the OS settings are not read at all
    env = ProxySettings.from_environ({"HTTPS_PROXY": "http://env:8080"}, os_proxies=os_settings)
    off = ProxySettings.from_environ({}, use_os_settings=False, os_proxies=os_settings)
    assert env.https == "http://env:8080" and off.https is None and calls == [1]

    # "all" (a SOCKS-for-everything OS setting) covers both schemes
    every = ProxySettings.from_environ({}, os_proxies=lambda: {"all": "socks://gw:1080"})
    assert every.http == every.https == "socks5://gw:1080"


def test_the_default_os_reader_is_urllib_getproxies(monkeypatch: pytest.MonkeyPatch) -> None:
    # On Linux urllib.request.getproxies reads the process environment: an empty mapping
    # given to from_environ still finds the proxy through the OS reader.
    monkeypatch.setenv("https_proxy", "http://from-the-os:3128")
    settings = ProxySettings.from_environ({})
    assert settings.https == "http://from-the-os:3128"
    assert ProxySettings.from_environ({}, use_os_settings=False).https is None


async def test_lazy_http_server_connects_on_the_first_call(
    bus: EventBus, events: Recorder, toolbox_http: RunningServer
) -> None:
    spec = make_spec("lazyweb", "http", url=toolbox_http.url, lazy=True, protocol=Protocol.LEGACY)
    warm = Connection(spec, bus=bus)  # no cache yet: the first start is eager and fills it
    await warm.start()
    try:
        assert (await warm.wait_settled(30)).status is Status.RUNNING
    finally:
        await warm.stop()
    assert schema_cache.load(spec) is not None

    events.events.clear()
    conn = Connection(spec, bus=bus)
    await conn.start()
    try:
        state = await conn.wait_settled(10)
        assert state.status is Status.LAZY and conn.from_cache
        assert state.tool_count == len(conn.tools) > 0
        await asyncio.sleep(0.3)
        assert conn.connected_at is None and events.statuses() == [Status.LAZY]
        result = await conn.call_tool("echo", {"text": "wake up"})
        assert result.content[0].text == "echo: wake up"
        assert events.statuses() == [Status.LAZY, Status.CONNECTING, Status.RUNNING]
        assert conn.connected_at is not None and not conn.from_cache
    finally:
        await conn.stop()


def _block(name: str) -> str:
    command = json.dumps([sys.executable, "-c", "pass"])
    return f"[mcp.{name}]\ncommand = {command}\n\n"


async def test_a_burst_of_writes_is_applied_once(project: Path) -> None:
    toml = paths().global_toml
    toml.parent.mkdir(parents=True, exist_ok=True)
    toml.write_text(_block("s0"))
    applied: list[Config] = []

    async def apply(config: Config) -> None:
        applied.append(config)

    watcher = ConfigWatcher(apply, project=project, interval=0.05, debounce=0.4)
    watcher.start()
    try:
        for i in range(1, 6):  # five writes, 0.05 s apart: all within one debounce
            toml.write_text("".join(_block(f"s{j}") for j in range(i + 1)))
            await asyncio.sleep(0.05)
        await eventually(lambda: len(applied) >= 1, what="the apply")
        await asyncio.sleep(1.0)  # a second (wrong) apply would come within this
        assert len(applied) == 1 and watcher.reloads == 1
        assert [s.name for s in applied[0].servers] == [f"s{j}" for j in range(6)]
    finally:
        await watcher.stop()


async def test_progress_extends_a_call_to_exactly_ten_times_the_timeout(bus: EventBus) -> None:
    conn = Connection(toolbox_spec("steady"), bus=bus)
    await conn.start()
    try:
        assert (await conn.wait_settled(30)).status is Status.RUNNING
        reports: list[float] = []
        started = time.monotonic()
        with pytest.raises(CallTimeout, match="up to 3 s"):
            # progress every 0.1 s for 20 s: each report pushes the 0.3 s deadline on
            await conn.call_tool(
                "sleep",
                {"seconds": 20, "steps": 200},
                timeout=0.3,
                context=calling(lambda done, total, message: reports.append(done)),
            )
        elapsed = time.monotonic() - started
        # Never before 10x; well before the 20 s the server would go on for (a loaded
        # 2-core CI machine needs the slack above 3 s).
        assert 3.0 <= elapsed < 6.0, elapsed
        assert len(reports) >= 20  # it really was progress that kept it alive past 0.3 s
    finally:
        await conn.stop()
