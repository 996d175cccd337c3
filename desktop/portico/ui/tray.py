"""The system tray icon: aggregate state, summary tooltip, per-server actions, notifications.

Without a system tray (some Linux desktops) nothing is shown and ``available`` is False;
the app keeps working in its window. Every notification that passes the rate limit is also
emitted as ``notified`` (whether or not a tray can show it), so the window or a test can
follow them.
"""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QSystemTrayIcon

from portico.runtime.events import ServerState, Status
from portico.ui.actions import ActionId, label, useful
from portico.ui.icons import status_icon, tray_icon, tray_variant
from portico.ui.models.clock import clock
from portico.ui.text import plain
from portico.ui.tray_state import (
    Aggregate,
    RateLimiter,
    aggregate,
    endpoint_line,
    status_text,
    summary,
    tooltip,
)


class Tray(QObject):
    showHideRequested = Signal()
    configEditorRequested = Signal()
    quitRequested = Signal()
    serverActionRequested = Signal(str, str)  # ActionId, server name
    notified = Signal(str, str, bool)  # title, text, critical: a notification went out

    def __init__(self, parent: QObject | None = None, *, notify_interval: float = 60.0) -> None:
        super().__init__(parent)
        self.available = QSystemTrayIcon.isSystemTrayAvailable()
        self.state = Aggregate.EMPTY
        self.endpoint_url: str | None = None  # the local endpoint's, while it runs
        self.tooltip = summary([])  # the servers' line (the menu's head)
        self.icon_tooltip = tooltip([], None, None)  # that line and the endpoint's
        self._summary: str | None = None
        self._states: list[ServerState] = []
        self._limiter = RateLimiter(notify_interval)
        self.menu = QMenu()
        self.menu.setAccessibleName("Portico tray menu")
        self.icon: QSystemTrayIcon | None = None
        if self.available:
            self.icon = QSystemTrayIcon(tray_icon(self.state, tray_variant()), self)
            self.icon.setContextMenu(self.menu)
            self.icon.activated.connect(self._activated)
        self.rebuild_menu()
        clock().ticked.connect(self._tick)
        self.menu.aboutToShow.connect(self._retitle)

    def _tick(self) -> None:
        """The one clock moved on: "Retrying in N s" counts down in the open menu too."""
        if self.menu.isVisible():
            self._retitle()

    def _retitle(self) -> None:
        now = clock().now()
        for action in self.menu.actions():
            name = action.data()
            state = next((s for s in self._states if s.name == name), None)
            if state is not None:
                action.setText(plain(f"{state.name} — {status_text(state, now)}"))

    def show(self) -> None:
        if self.icon is not None:
            self.icon.show()

    def hide(self) -> None:
        if self.icon is not None:
            self.icon.hide()

    # --- state ---------------------------------------------------------------------------

    def update_states(self, states: Iterable[ServerState]) -> None:
        new = list(states)
        before = {s.name: s.status for s in self._states}
        self._states = new
        self.state = aggregate(new)
        for state in new:
            if before.get(state.name) == state.status:
                continue
            if state.status is Status.FAILED:
                self.notify(
                    f"{state.name} failed",
                    state.error or "The server stopped working.",
                    key=f"{state.name}:failed",
                    critical=True,
                )
            elif state.status is Status.NEEDS_AUTH:
                self.notify(
                    "Sign-in needed",
                    f"{state.name} needs you to sign in.",
                    key=f"{state.name}:auth",
                )
        self._refresh()

    def set_summary(self, line: str) -> None:
        self._summary = line
        self._refresh()

    def set_endpoint(self, url: str | None) -> None:
        if url != self.endpoint_url:
            self.endpoint_url = url
            self._refresh()

    def _refresh(self) -> None:
        full = tooltip(self._states, self._summary, self.endpoint_url)
        self.icon_tooltip = plain(full, multiline=True)
        self.tooltip = plain(full.split("\n", 1)[0])
        if self.icon is not None:
            self.icon.setIcon(tray_icon(self.state, tray_variant()))
            self.icon.setToolTip(self.icon_tooltip)
        self.rebuild_menu()

    def notify(self, title: str, text: str, *, key: str, critical: bool = False) -> bool:
        """Show a notification unless one with the same key was shown recently."""
        if not self._limiter.allow(key):
            return False
        title, text = plain(title), plain(text, multiline=True)  # a server's error, shown as is
        self.notified.emit(title, text, critical)
        if self.icon is not None and self.icon.supportsMessages():
            level = (
                QSystemTrayIcon.MessageIcon.Critical
                if critical
                else QSystemTrayIcon.MessageIcon.Information
            )
            self.icon.showMessage(title, text, level, 8000)
        return True

    # --- menu ----------------------------------------------------------------------------

    def rebuild_menu(self) -> None:
        self.menu.clear()
        head = self.menu.addAction(self.tooltip)
        head.setEnabled(False)
        self.endpoint_action = self.menu.addAction(plain(endpoint_line(self.endpoint_url)))
        self.endpoint_action.setEnabled(False)
        self.menu.addSeparator()
        now = clock().now()
        for state in self._states:
            action = useful(state)
            title = plain(f"{state.name} — {status_text(state, now)}")
            if action is None:
                item = self.menu.addAction(status_icon(state.status), title)
                item.setEnabled(False)
                item.setData(state.name)
            else:
                sub = self.menu.addMenu(status_icon(state.status), title)
                sub.menuAction().setData(state.name)
                act = sub.addAction(label(action))
                act.triggered.connect(
                    lambda _=False, a=action, n=state.name: self.serverActionRequested.emit(
                        str(a), n
                    )
                )
        if self._states:
            self.menu.addSeparator()
        self.show_hide_action = QAction("Show / Hide Window", self.menu)
        self.show_hide_action.triggered.connect(self.showHideRequested)
        self.menu.addAction(self.show_hide_action)
        self.config_action = QAction("Open Config Editor", self.menu)
        self.config_action.triggered.connect(self.configEditorRequested)
        self.menu.addAction(self.config_action)
        self.menu.addSeparator()
        self.quit_action = QAction("Quit Portico", self.menu)
        self.quit_action.triggered.connect(self.quitRequested)
        self.menu.addAction(self.quit_action)

    def server_actions(self) -> dict[str, ActionId]:
        """What the menu offers per server (for tests and the window's notices)."""
        out: dict[str, ActionId] = {}
        for state in self._states:
            action = useful(state)
            if action is not None:
                out[state.name] = action
        return out

    def _activated(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        if reason in (
            QSystemTrayIcon.ActivationReason.Trigger,
            QSystemTrayIcon.ActivationReason.DoubleClick,
        ):
            self.showHideRequested.emit()
