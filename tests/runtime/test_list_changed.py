"""list_changed for real: bursts coalesce, prompts and resources refresh, server-everything."""

from __future__ import annotations

import asyncio

import pytest

from portico.config.model import Protocol
from portico.runtime.connection import Connection
from portico.runtime.events import EventBus, Status, ToolsChanged

from .conftest import EVERYTHING, NODE, Recorder, eventually, make_spec, toolbox_spec

pytestmark = pytest.mark.slow  # talks to real servers or processes


async def _count(conn: Connection) -> int:
    result = await conn.call_tool("list_count", {})
    return int(result.content[0].text)


async def _until_count(conn: Connection, expected: int, within: float = 20.0) -> None:
    """Until the server has started ``expected`` tools/list requests (it says so itself)."""
    deadline = asyncio.get_running_loop().time() + within
    while (count := await _count(conn)) != expected:
        assert count < expected, f"{count} tools/list requests, expected {expected}"
        assert asyncio.get_running_loop().time() < deadline, f"still {count} of {expected}"
        await asyncio.sleep(0.02)


@pytest.mark.parametrize("protocol", [Protocol.LEGACY, Protocol.AUTO])
async def test_a_burst_of_list_changed_is_one_refresh(
    bus: EventBus, events: Recorder, protocol: Protocol
) -> None:
    conn = Connection(toolbox_spec("bursty", protocol=protocol), bus=bus)
    await conn.start()
    try:
        assert (await conn.wait_settled(30)).status is Status.RUNNING
        before = await _count(conn)
        changes = sum(isinstance(e, ToolsChanged) for e in events.events)
        await conn.call_tool("burst", {"n": 10})
        await eventually(
            lambda: sum(isinstance(e, ToolsChanged) for e in events.events) > changes,
            what="a refresh after the burst",
        )
        await asyncio.sleep(0.6)  # time for any (wrong) second refresh to reach the server
        assert await _count(conn) == before + 1
    finally:
        await conn.stop()


async def test_changes_during_a_refresh_make_exactly_one_more(
    bus: EventBus, events: Recorder
) -> None:
    # The server holds tools/list: the second and third bursts arrive while the first
    # refresh is in flight; together they make one pending refresh, not one each.
    spec = toolbox_spec("busy", protocol=Protocol.LEGACY)
    conn = Connection(spec, bus=bus)
    await conn.start()
    try:
        assert (await conn.wait_settled(30)).status is Status.RUNNING
        before = await _count(conn)
        changes = sum(isinstance(e, ToolsChanged) for e in events.events)
        await conn.call_tool("hold_lists", {})
        await conn.call_tool("burst", {"n": 3})
        await _until_count(conn, before + 1)  # the first refresh is held by the server
        await conn.call_tool("burst", {"n": 3})
        await conn.call_tool("burst", {"n": 3})
        assert await _count(conn) == before + 1  # still the one refresh, in flight
        await conn.call_tool("release_lists", {})
        await eventually(
            lambda: sum(isinstance(e, ToolsChanged) for e in events.events) >= changes + 2,
            what="two refreshes",
        )
        await asyncio.sleep(1.0)  # a third (wrong) refresh would reach the server by now
        assert await _count(conn) == before + 2
    finally:
        await conn.stop()


@pytest.mark.parametrize("protocol", [Protocol.LEGACY, Protocol.AUTO])
async def test_prompt_and_resource_list_changes_refresh_their_lists(
    bus: EventBus, protocol: Protocol
) -> None:
    conn = Connection(toolbox_spec("growing", protocol=protocol), bus=bus)
    await conn.start()
    try:
        assert (await conn.wait_settled(30)).status is Status.RUNNING
        assert [p.name for p in conn.prompts] == ["greet"]
        assert [str(r.uri) for r in conn.resources] == ["toolbox://readme"]
        await conn.call_tool("more_prompts", {})
        await eventually(
            lambda: [p.name for p in conn.prompts] == ["greet", "extra_prompt_1"],
            what="the new prompt",
        )
        await conn.call_tool("more_resources", {})
        await eventually(
            lambda: "toolbox://extra/1" in {str(r.uri) for r in conn.resources},
            what="the new resource",
        )
    finally:
        await conn.stop()


@pytest.mark.npm
@pytest.mark.skipif(not EVERYTHING.exists(), reason="npm peers not installed")
async def test_everything_resource_list_changed(bus: EventBus) -> None:
    # server-everything's gzip tool registers a session resource, which makes its SDK send
    # notifications/resources/list_changed (it has no tool that changes its tool list).
    node = str(NODE) if NODE.exists() else "node"
    spec = make_spec("everything", command=node, args=(str(EVERYTHING), "stdio"), timeout=20)
    conn = Connection(spec, bus=bus)
    await conn.start()
    try:
        assert (await conn.wait_settled(30)).status is Status.RUNNING
        uri = "demo://resource/session/hello.txt.gz"
        assert uri not in {str(r.uri) for r in conn.resources}
        await conn.call_tool(
            "gzip-file-as-resource",
            {
                "name": "hello.txt.gz",
                "data": "data:text/plain;base64,aGVsbG8=",
                "outputType": "resource",
            },
        )
        await eventually(lambda: uri in {str(r.uri) for r in conn.resources}, what="new resource")
    finally:
        await conn.stop()
