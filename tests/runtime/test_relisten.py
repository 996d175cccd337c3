"""Issue 26, item 2: lists catch up after the channel of their changes dropped.

A 2026-07-28 ``subscriptions/listen`` stream that drops is opened
again (with backoff) and the lists are fetched again, since the stream has no replay.
The toolbox over Streamable HTTP restarts on its port with the tool "extra" it did not
have: the stateless session carries on, only the listen stream was lost, and the
connection's tool list catches up without any call. Before, the listen stream was never
reopened and the list stayed stale."""

from __future__ import annotations

import pytest

from portico.config.model import Protocol
from portico.runtime.connection import Connection
from portico.runtime.events import EventBus, Status, ToolsChanged
from tests.helpers.cutting_proxy import CuttingProxy

from .conftest import Recorder, eventually, make_spec, start_toolbox

pytestmark = pytest.mark.slow  # real servers and processes


async def test_a_dropped_listen_stream_is_reopened_and_the_lists_catch_up(
    bus: EventBus, events: Recorder
) -> None:
    server = start_toolbox("http")
    conn = Connection(make_spec("deaf", "http", url=server.url), bus=bus)
    await conn.start()
    try:
        assert (await conn.wait_settled(60)).status is Status.RUNNING
        assert conn.protocol_version == "2026-07-28"
        assert "extra" not in {tool.name for tool in conn.tools}
        server.proc.kill()
        server.proc.wait(10)
        changes = sum(isinstance(e, ToolsChanged) for e in events.events)
        # Changed while nobody listened: the new process starts with the tool.
        server = start_toolbox("http", "--extra", port=server.port)
        await eventually(
            lambda: "extra" in {tool.name for tool in conn.tools}, 30, "the list to catch up"
        )
        assert sum(isinstance(e, ToolsChanged) for e in events.events) > changes
        assert any("listening for list changes again" in line for line in conn.log.lines)
        assert conn.state.status is Status.RUNNING
        # and it listens again for real: a change now is announced and heard
        await conn.call_tool("flip", {})  # removes "extra"
        await eventually(
            lambda: "extra" not in {tool.name for tool in conn.tools}, 20, "the flip to be heard"
        )
    finally:
        await conn.stop()
        server.proc.kill()
        server.proc.wait(10)


async def test_an_event_stream_opened_again_fetches_the_lists(
    bus: EventBus, events: Recorder
) -> None:
    # 2025-11-25: list changes come on the session's GET event stream. A proxy cuts it;
    # the tool list changes while it is down (the announcement is lost); the SDK opens the
    # stream again a second later and the connection fetches the lists again.
    server = start_toolbox("http")
    proxy = CuttingProxy(server.port)
    port = await proxy.start()
    url = f"http://127.0.0.1:{port}/mcp"
    conn = Connection(make_spec("blip", "http", url=url, protocol=Protocol.LEGACY), bus=bus)
    await conn.start()
    try:
        assert (await conn.wait_settled(60)).status is Status.RUNNING
        await eventually(lambda: proxy.cut_event_streams() > 0, 10, "the event stream")
        assert _text(await conn.call_tool("flip", {})) == "extra on"  # announced to nobody
        await eventually(
            lambda: "extra" in {tool.name for tool in conn.tools}, 20, "the list to catch up"
        )
        assert any("event stream was opened again" in line for line in conn.log.lines)
        assert conn.state.status is Status.RUNNING
    finally:
        await conn.stop()
        await proxy.close()
        server.proc.kill()
        server.proc.wait(10)


def _text(result: object) -> str:
    return " ".join(getattr(part, "text", "") for part in getattr(result, "content", []))
