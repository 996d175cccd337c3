"""The server list model, fed by a real EventBus across the real runtime thread."""

from __future__ import annotations

import re
import time

from PySide6.QtCore import Qt

from portico.runtime.events import EventBus, ServerState, Status, StatusChanged, ToolsChanged
from portico.ui.bridge import EventBridge, attach_on_runtime
from portico.ui.facade import RuntimeThread
from portico.ui.main_window import MainWindow
from portico.ui.models.servers import ServerListModel
from portico.ui.tray import Tray
from portico.ui.tray_state import Aggregate
from tests.ui.qt_helpers import until


async def _publish(runtime: RuntimeThread, bus: EventBus, *events: object) -> None:
    async def go() -> None:
        for event in events:
            bus.publish(event)  # type: ignore[arg-type]

    await runtime.submit(go())


async def test_model_follows_the_hub_events(runtime: RuntimeThread) -> None:
    bus = EventBus()
    bridge = EventBridge()
    model = ServerListModel()
    model.connect_bridge(bridge)
    tray = Tray()
    model.statesChanged.connect(lambda: tray.update_states(model.states()))
    await runtime.submit(attach_on_runtime(bridge, bus))

    await _publish(
        runtime,
        bus,
        StatusChanged(ServerState("github", Status.CONNECTING)),
        StatusChanged(ServerState("files", Status.CONNECTING)),
    )
    await until(lambda: model.rowCount() == 2, what="two rows")
    assert tray.state is Aggregate.CONNECTING
    assert model.index(0).data(ServerListModel.NameRole) == "github"
    assert model.index(0).data(Qt.ItemDataRole.DisplayRole) == "github\nConnecting"

    model.set_scopes({"github": "global", "files": "project"})
    await _publish(
        runtime,
        bus,
        StatusChanged(ServerState("github", Status.RUNNING, tool_count=3)),
        ToolsChanged("github", 5),
        StatusChanged(ServerState("files", Status.NEEDS_AUTH, error="token expired")),
    )
    await until(lambda: model.index(0).data(ServerListModel.ToolCountRole) == 5, what="5 tools")
    assert model.index(0).data(Qt.ItemDataRole.DisplayRole) == "github  [global]\nRunning · 5 tools"
    assert model.index(1).data(ServerListModel.StatusRole) == Status.NEEDS_AUTH  # str via QVariant
    assert model.index(1).data(Qt.ItemDataRole.ToolTipRole) == "token expired"
    assert model.index(1).data(ServerListModel.ScopeRole) == "project"
    assert not model.index(0).data(Qt.ItemDataRole.DecorationRole).isNull()
    assert tray.state is Aggregate.ATTENTION
    assert {n: str(a) for n, a in tray.server_actions().items()} == {"files": "sign-in"}

    retry_at = time.time() + 30
    await _publish(
        runtime,
        bus,
        StatusChanged(ServerState("files", Status.COOLDOWN, error="boom", retry_at=retry_at)),
    )
    await until(
        lambda: str(model.index(1).data(ServerListModel.StatusTextRole)).startswith(
            "Failed, retrying in"
        ),
        what="the countdown",
    )
    first = model.index(1).data(ServerListModel.StatusTextRole)
    assert model.counting_down  # the clock's ticks count a row down
    model._clock = lambda: time.time() + 10  # a later second, as the timer would see it
    model._tick()
    assert model.index(1).data(ServerListModel.StatusTextRole) != first
    assert tray.state is Aggregate.FAILED

    await _publish(runtime, bus, StatusChanged(ServerState("files", Status.STOPPED)))
    await until(lambda: model.rowCount() == 1, what="the removed server to leave")
    assert not model.counting_down
    assert tray.state is Aggregate.RUNNING
    assert "1 server" in tray.tooltip


async def test_main_window_shows_the_selected_server(runtime: RuntimeThread) -> None:
    bus = EventBus()
    bridge = EventBridge()
    window = MainWindow()
    window.model.connect_bridge(bridge)
    bridge.logLine.connect(window.add_log_line)
    await runtime.submit(attach_on_runtime(bridge, bus))
    from portico.runtime.events import LogLine

    await _publish(
        runtime,
        bus,
        StatusChanged(ServerState("github", Status.FAILED, error="npx: command not found")),
        LogLine("github", "starting npx"),
    )
    await until(lambda: window.model.rowCount() == 1, what="the row")
    window.server_list.setCurrentIndex(window.model.index(0))
    assert "npx: command not found" in window.page.overview.text()
    assert window.page.log_view.toPlainText().endswith("  starting npx")  # after its time
    labels = dict(window.server_actions(window.selected_state()))  # type: ignore[arg-type]
    assert labels["Retry now"] is True and labels["Sign in…"] is False
    await _publish(runtime, bus, LogLine("github", "again", stream="portico"))
    await until(lambda: "again" in window.page.log_view.toPlainText(), what="live log")
    stamp = r"\d\d:\d\d:\d\d\.\d{3}  "  # every line shows when it arrived
    shown = window.page.log_view.toPlainText()
    assert re.fullmatch(f"{stamp}starting npx\n{stamp}\\[portico\\] again", shown), shown
