"""Fleet: 30 small stdio servers under discovery_concurrency 4, and config changes."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import pytest

from portico.config.model import Config, RuntimeSettings, Scope, ServerSpec
from portico.runtime.events import Event, EventBus, Status, StatusChanged
from portico.runtime.hub import Hub

from .conftest import eventually, make_spec

pytestmark = pytest.mark.slow  # talks to real servers or processes

TINY = Path(__file__).resolve().parents[1] / "servers" / "tiny.py"


def tiny(name: str, *extra: str, **fields: object) -> ServerSpec:
    return make_spec(
        name, "stdio", command=sys.executable, args=(str(TINY), "--name", name, *extra), **fields
    )


class ConnectingCounter:
    """The most servers ever in Connecting at the same time, read from the events."""

    def __init__(self) -> None:
        self.now: set[str] = set()
        self.peak = 0
        self.connects: list[str] = []

    def __call__(self, event: Event) -> None:
        if not isinstance(event, StatusChanged):
            return
        name = event.state.name
        if event.state.status is Status.CONNECTING:
            self.now.add(name)
            self.connects.append(name)
            self.peak = max(self.peak, len(self.now))
        else:
            self.now.discard(name)


def fleet() -> list[ServerSpec]:
    specs = [tiny(f"ok{i:02d}", "--tools", "2") for i in range(24)]  # 3 tools each
    specs += [tiny(f"bad{i}", "--exit", "1") for i in range(3)]
    specs += [tiny(f"lazy{i}", "--tools", "4", lazy=True) for i in range(3)]  # 5 tools each
    return specs


async def test_fleet_of_30(tmp_path: Path) -> None:
    specs = fleet()
    lazy = [s for s in specs if s.lazy]
    # A first pass fills the schema cache: lazy servers with no cache start eagerly.
    async with Hub() as warmup:
        await warmup.apply(Config(servers=tuple(lazy)))
        assert all(warmup.connection(s.name).state.status is Status.RUNNING for s in lazy)

    bus = EventBus()
    counter = ConnectingCounter()
    bus.subscribe(counter)
    async with Hub(bus) as hub:
        line = await hub.apply(
            Config(servers=tuple(specs), settings=RuntimeSettings(discovery_concurrency=4))
        )
        assert counter.peak <= 4, f"{counter.peak} servers were connecting at once"
        assert counter.peak >= 2  # the limit was used, not a one-by-one pass
        assert sorted(counter.connects) == sorted(s.name for s in specs if not s.lazy)
        statuses = {s.name: hub.connection(s.name).state.status for s in specs}
        assert {statuses[s.name] for s in lazy} == {Status.LAZY}
        assert len(hub.registry) == 24 * 3 + 3 * 5
        assert line == (
            "MCP: registered 87 tool(s) from 27 server(s) (3 lazy, not spawned yet; "
            "3 failed: bad0 (server exited (code 1)); bad1 (server exited (code 1)); "
            "bad2 (server exited (code 1)))"
        )
        assert hub.summary_line() == line

        # a lazy server starts on its first call, keeping its tools registered
        result = await hub.registry.call("lazy0__echo", {"text": "wake up"})
        assert result.text() == "wake up"
        assert hub.connection("lazy0").state.status is Status.RUNNING
        assert len(hub.registry.server_tools("lazy0")) == 5


async def test_unlimited_concurrency() -> None:
    specs = [tiny(f"s{i}") for i in range(6)]
    bus = EventBus()
    counter = ConnectingCounter()
    bus.subscribe(counter)
    async with Hub(bus) as hub:
        line = await hub.apply(
            Config(servers=tuple(specs), settings=RuntimeSettings(discovery_concurrency=0))
        )
    assert line == "MCP: registered 18 tool(s) from 6 server(s)"
    # No limit: every server is Connecting before the first one is through (a handshake
    # takes a process start and a round trip), where a limit of N would cap this at N.
    assert counter.peak == 6, f"only {counter.peak} servers were connecting at once"
    assert sorted(counter.connects) == sorted(s.name for s in specs)


async def test_config_change_under_a_running_hub() -> None:
    keep = tiny("keep")
    change = tiny("change", "--tools", "1")
    remove = tiny("remove")
    async with Hub() as hub:
        await hub.apply(Config(servers=(keep, change, remove)))
        kept_conn = hub.connection("keep")
        kept_pid = kept_conn.pid
        changed_pid = hub.connection("change").pid
        removed_conn = hub.connection("remove")
        assert kept_pid is not None and changed_pid is not None
        assert len(hub.registry.server_tools("change")) == 2

        changed = replace(change, args=(*change.args[:-1], "5"))
        added = tiny("added")
        line = await hub.apply(Config(servers=(keep, changed, added)))

        assert hub.connection("keep") is kept_conn and kept_conn.pid == kept_pid
        assert hub.connection("change").pid not in (None, changed_pid)
        assert len(hub.registry.server_tools("change")) == 6
        assert "remove" not in hub.connections
        assert removed_conn.state.status is Status.STOPPED
        assert hub.registry.server_tools("remove") == []
        assert hub.connection("added").state.status is Status.RUNNING
        assert sorted(hub.registry.toolsets()) == ["mcp-added", "mcp-change", "mcp-keep"]
        assert line == "MCP: registered 12 tool(s) from 3 server(s)"


async def test_restart_and_retry_keep_tools_registered() -> None:
    spec = tiny("one", "--tools", "1")
    async with Hub() as hub:
        await hub.apply(Config(servers=(spec,)))
        pid = hub.connection("one").pid
        state = await hub.restart("one")
        assert state.status is Status.RUNNING
        assert hub.connection("one").pid not in (None, pid)
        assert [t.qualified for t in hub.registry.server_tools("one")] == [
            "one__echo",
            "one__tool_1",
        ]
        state = await hub.retry("one")  # retrying a running server changes nothing
        assert state.status is Status.RUNNING
        assert len(hub.registry.server_tools("one")) == 2


async def test_pass_budget_leaves_slow_servers_connecting() -> None:
    # "slow" never answers the handshake; its connect_timeout outlasts the pass budget
    slow = make_spec(
        "slow",
        "stdio",
        command=sys.executable,
        args=("-c", "import time; time.sleep(60)"),
        connect_timeout=6.0,
    )
    fast = tiny("fast")
    async with Hub(wave_budget=3.0, pass_budget=4.0) as hub:
        line = await hub.apply(Config(servers=(fast, slow)))
        assert line == "MCP: registered 3 tool(s) from 1 server(s) (1 still connecting: slow)"
        # the connect goes on in the background and ends by its own connect_timeout
        await eventually(
            lambda: hub.connection("slow").state.status in (Status.FAILED, Status.COOLDOWN),
            15,
            "slow to give up",
        )
        assert "connect_timeout" in (hub.connection("slow").state.error or "")


async def test_moving_a_server_restarts_it_but_a_new_line_does_not(project: Path) -> None:
    spec = tiny("mover")
    async with Hub() as hub:
        await hub.apply(Config(servers=(spec,)))
        first = hub.connection("mover")
        moved_down = replace(spec, source=replace(spec.source, line=40))
        await hub.apply(Config(servers=(moved_down,)))
        assert hub.connection("mover") is first and first.spec.source.line == 40
        into_project = replace(
            spec,
            source=replace(
                spec.source, scope=Scope.PROJECT, path=project / ".portico" / "mcp.toml"
            ),
        )
        await hub.apply(Config(servers=(into_project,)))
        assert hub.connection("mover") is not first
        assert first.state.status is Status.STOPPED
