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

_Item = QAction | QMenu  # a server's row: a plain action, or a submenu offering its action


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
        # The menu's server rows by name: (its item, the action it offers, the state shown).
        # An item is a plain action or a submenu, never a submenu's ``menuAction()``: PySide
        # does not follow the lifetime of a wrapper Qt made (``QMenu.clear`` invalidates it,
        # and a later action at its address may come back as that dead wrapper).
        self._rows: dict[str, tuple[_Item, ActionId | None, ServerState]] = {}
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
        for item, _offered, state in self._rows.values():
            _retitle(item, _row_title(state, now))

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
        self._update_menu()

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

    def _update_menu(self) -> None:
        """Update the rows that changed (a status change touches one row of hundreds);
        rebuilt only when servers came, went or moved."""
        if [s.name for s in self._states] != list(self._rows):
            self.rebuild_menu()
            return
        self.head_action.setText(self.tooltip)
        self.endpoint_action.setText(plain(endpoint_line(self.endpoint_url)))
        now = clock().now()
        for state in self._states:
            item, offered, shown = self._rows[state.name]
            if state == shown:
                continue
            if useful(state) != offered:
                self._replace_row(state, item)
                continue
            _retitle(item, _row_title(state, now))
            item.setIcon(status_icon(state.status))
            self._rows[state.name] = (item, offered, state)

    def rebuild_menu(self) -> None:
        self._drop_submenus()
        self.menu.clear()
        self._rows = {}
        self.head_action = self.menu.addAction(self.tooltip)
        self.head_action.setEnabled(False)
        self.endpoint_action = self.menu.addAction(plain(endpoint_line(self.endpoint_url)))
        self.endpoint_action.setEnabled(False)
        self.menu.addSeparator()
        self._rows_end = self.menu.addSeparator()
        for state in self._states:
            self._add_row(state, self._rows_end)
        self._rows_end.setVisible(bool(self._states))
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

    def _add_row(self, state: ServerState, before: QAction) -> None:
        action = useful(state)
        title = _row_title(state, clock().now())
        item: _Item
        if action is None:
            item = QAction(status_icon(state.status), title, self.menu)
            item.setEnabled(False)
            item.setData(state.name)
            self.menu.insertAction(before, item)
        else:
            item = QMenu(title, self.menu)
            item.setIcon(status_icon(state.status))
            act = item.addAction(label(action))
            act.triggered.connect(
                lambda _=False, a=action, n=state.name: self.serverActionRequested.emit(str(a), n)
            )
            self.menu.insertMenu(before, item).setData(state.name)
        self._rows[state.name] = (item, action, state)

    def _replace_row(self, state: ServerState, old: _Item) -> None:
        anchor = old.menuAction() if isinstance(old, QMenu) else old
        self._add_row(state, anchor)
        self.menu.removeAction(anchor)
        old.deleteLater()

    def _drop_submenus(self) -> None:
        """``QMenu.clear`` deletes the menu's own actions, not its submenus (children of
        the menu, which would pile up with every rebuild)."""
        for item, _offered, _state in self._rows.values():
            if isinstance(item, QMenu):
                item.deleteLater()

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


def _row_title(state: ServerState, now: float) -> str:
    return plain(f"{state.name} — {status_text(state, now)}")


def _retitle(item: _Item, title: str) -> None:
    if isinstance(item, QMenu):
        item.setTitle(title)
    else:
        item.setText(title)
