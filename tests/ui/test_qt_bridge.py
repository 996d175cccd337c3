"""Events published on the runtime thread arrive as Qt signals on the GUI thread."""

from __future__ import annotations

import threading

from portico.runtime.events import (
    ActivityChanged,
    AuthRequired,
    DiscoveryFinished,
    EventBus,
    LogLine,
    ServerState,
    Status,
    StatusChanged,
    ToolsChanged,
)
from portico.ui.bridge import EventBridge, attach_on_runtime
from portico.ui.facade import RuntimeThread
from tests.ui.qt_helpers import until


async def test_bridge_crosses_every_event_kind_to_the_gui_thread(runtime: RuntimeThread) -> None:
    bus = EventBus()
    bridge = EventBridge()
    gui = threading.current_thread()
    got: list[tuple[str, object, bool]] = []

    def rec(kind: str):  # type: ignore[no-untyped-def]
        return lambda *args: got.append((kind, args, threading.current_thread() is gui))

    bridge.statusChanged.connect(rec("status"))
    bridge.toolsChanged.connect(rec("tools"))
    bridge.logLine.connect(rec("log"))
    bridge.discoveryFinished.connect(rec("discovery"))
    bridge.authRequired.connect(rec("auth"))
    bridge.activityChanged.connect(rec("activity"))
    await runtime.submit(attach_on_runtime(bridge, bus))

    state = ServerState("github", Status.RUNNING, tool_count=3)
    line = LogLine("github", "hello")

    line = LogLine("github", "hello")  # one object: it carries the time it was made

    async def publish_all() -> str:
        bus.publish(StatusChanged(state))
        bus.publish(ToolsChanged("github", 4))
        bus.publish(line)
        bus.publish(DiscoveryFinished("1 server running, 4 tools"))
        bus.publish(AuthRequired("linear", "the refresh token expired"))
        bus.publish(ActivityChanged("github", 7))
        return threading.current_thread().name

    assert await runtime.submit(publish_all()) == "portico-runtime"
    await until(lambda: len(got) == 6, what="six signals")
    kinds = [kind for kind, _, _ in got]
    assert kinds == ["status", "tools", "log", "discovery", "auth", "activity"]
    assert all(on_gui for _, _, on_gui in got)
    assert got[0][1] == (state,)
    assert got[1][1] == ("github", 4)
    assert got[2][1] == (line,)
    assert got[3][1] == ("1 server running, 4 tools",)
    assert got[4][1] == ("linear", "the refresh token expired")
    assert got[5][1] == ("github",)
