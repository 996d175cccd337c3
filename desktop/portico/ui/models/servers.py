"""The server list: one row per configured server, fed by the bridge's signals (no polling).

Rows keep the configured order (``set_order``, from the config); servers not in it follow in
the order their first status arrives. A server whose status becomes Stopped (removed from
the config, or for a moment while it restarts) leaves the list; when it comes back it is
inserted at its configured position again, not appended at the bottom.
The window's one clock (ui/models/clock.py) counts down the retry of rows in Cooldown; its
ticks change only the text roles (``COUNTDOWN_ROLES``) and emit ``countdownTicked``, so
listeners that care about real state changes can tell a tick from a change.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from PySide6.QtCore import (
    QAbstractListModel,
    QByteArray,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    Signal,
)
from PySide6.QtGui import QIcon

from portico.runtime.events import ServerState, Status
from portico.ui.bridge import EventBridge
from portico.ui.icons import announced_icon, status_icon
from portico.ui.models.clock import clock
from portico.ui.text import plain, tip
from portico.ui.tray_state import status_text

_Index = QModelIndex | QPersistentModelIndex


class ServerListModel(QAbstractListModel):
    NameRole = Qt.ItemDataRole.UserRole + 1
    StatusRole = Qt.ItemDataRole.UserRole + 2  # Status
    StatusTextRole = Qt.ItemDataRole.UserRole + 3
    ToolCountRole = Qt.ItemDataRole.UserRole + 4
    ScopeRole = Qt.ItemDataRole.UserRole + 5  # "global" / "project" / None
    StateRole = Qt.ItemDataRole.UserRole + 6  # the whole ServerState
    ErrorRole = Qt.ItemDataRole.UserRole + 7

    statesChanged = Signal()  # any row changed: the tray re-aggregates
    countdownTicked = Signal(str)  # server name: only its "Retrying in N s" text moved on
    # Server name, emitted before its row is removed: the list view moves its current
    # index away inside rowsAboutToBeRemoved, so listeners that want to keep a selection
    # across a restart must learn of it earlier.
    rowLeaving = Signal(str)

    # What a countdown tick changes (the status text); the ServerState itself stays the same.
    COUNTDOWN_ROLES = (
        Qt.ItemDataRole.DisplayRole,
        Qt.ItemDataRole.ToolTipRole,
        Qt.ItemDataRole.AccessibleTextRole,
        StatusTextRole,
    )

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._rows: list[ServerState] = []
        self._scopes: dict[str, str] = {}
        self._sandboxes: dict[str, str] = {}
        self._sandbox_notes: dict[str, str] = {}
        self._rank: dict[str, int] = {}  # configured position by server name
        self._clock = clock().now  # the window's one reading per tick (models/clock.py)
        clock().ticked.connect(self._tick)

    # --- feeding -------------------------------------------------------------------------

    def connect_bridge(self, bridge: EventBridge) -> None:
        bridge.statusChanged.connect(self.update_state)
        bridge.toolsChanged.connect(self.set_tool_count)

    def update_state(self, state: ServerState) -> None:
        row = self.row_of(state.name)
        if state.status is Status.STOPPED:
            if row is not None:
                self.rowLeaving.emit(state.name)
                self.beginRemoveRows(QModelIndex(), row, row)
                del self._rows[row]
                self.endRemoveRows()
        elif row is None:
            at = self._insert_position(state.name)
            self.beginInsertRows(QModelIndex(), at, at)
            self._rows.insert(at, state)
            self.endInsertRows()
        else:
            self._rows[row] = state
            self._changed(row)
        self.statesChanged.emit()

    def set_tool_count(self, server: str, count: int) -> None:
        row = self.row_of(server)
        if row is None:
            return
        self._rows[row] = replace(self._rows[row], tool_count=count)
        self._changed(row)
        self.statesChanged.emit()

    def set_scopes(
        self,
        scopes: Mapping[str, str],
        sandboxes: Mapping[str, str] | None = None,
        sandbox_notes: Mapping[str, str] | None = None,
    ) -> None:
        """Server name -> "global" / "project" (from the loaded config), -> its sandbox
        badge ("sandboxed: bwrap", "no sandbox", ...; none for most global servers) and
        -> what its tooltip says of the sandbox (the method and why)."""
        self._scopes = dict(scopes)
        self._sandboxes = dict(sandboxes or {})
        self._sandbox_notes = dict(sandbox_notes or {})
        if self._rows:
            self.dataChanged.emit(self.index(0), self.index(len(self._rows) - 1))

    def set_order(self, names: Iterable[str]) -> None:
        self._rank = {name: i for i, name in enumerate(names)}
        self.layoutAboutToBeChanged.emit()
        self._rows.sort(key=lambda s: self._rank.get(s.name, len(self._rank)))
        self.layoutChanged.emit()

    # --- reading -------------------------------------------------------------------------

    def states(self) -> list[ServerState]:
        return list(self._rows)

    def row_of(self, name: str) -> int | None:
        for i, state in enumerate(self._rows):
            if state.name == name:
                return i
        return None

    def state(self, name: str) -> ServerState | None:
        row = self.row_of(name)
        return None if row is None else self._rows[row]

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        state = self._rows[index.row()]
        scope = self._scopes.get(state.name)
        text = status_text(state, self._clock())
        if role == Qt.ItemDataRole.DisplayRole:
            marks = [m for m in (scope, self._sandboxes.get(state.name)) if m]
            badge = f"  [{' · '.join(marks)}]" if marks else ""
            tools = "1 tool" if state.tool_count == 1 else f"{state.tool_count} tools"
            detail = f"{text} · {tools}" if state.status is Status.RUNNING else text
            return f"{plain(state.name)}{badge}\n{plain(detail)}"
        if role == Qt.ItemDataRole.DecorationRole:
            return self._icon(state)
        if role == Qt.ItemDataRole.ToolTipRole:
            note = self._sandbox_notes.get(state.name)
            return tip(f"{state.error or text}\n{note}" if note else state.error or text)
        if role == Qt.ItemDataRole.AccessibleTextRole:
            return plain(f"{state.name}, {text}, {state.tool_count} tools")
        if role == self.NameRole:
            return state.name
        if role == self.StatusRole:
            return state.status
        if role == self.StatusTextRole:
            return text
        if role == self.ToolCountRole:
            return state.tool_count
        if role == self.ScopeRole:
            return scope
        if role == self.StateRole:
            return state
        if role == self.ErrorRole:
            return state.error
        return None

    def roleNames(self) -> dict[int, QByteArray]:
        names = {
            Qt.ItemDataRole.DisplayRole: b"display",
            self.NameRole: b"name",
            self.StatusRole: b"status",
            self.StatusTextRole: b"statusText",
            self.ToolCountRole: b"toolCount",
            self.ScopeRole: b"scope",
            self.ErrorRole: b"error",
        }
        return {int(role): QByteArray(name) for role, name in names.items()}

    # --- internals -----------------------------------------------------------------------

    def _icon(self, state: ServerState) -> QIcon:
        """The server's own icon while it runs (a checked file in the icon cache), else
        the status icon; a file that will not decode falls back too."""
        icon = announced_icon(state.icon) if state.status is Status.RUNNING else None
        return icon or status_icon(state.status)

    def _insert_position(self, name: str) -> int:
        """Before the first row ranked after ``name``; unconfigured servers go last."""
        rank = self._rank.get(name)
        if rank is None:
            return len(self._rows)
        for i, state in enumerate(self._rows):
            if self._rank.get(state.name, len(self._rank)) > rank:
                return i
        return len(self._rows)

    def _changed(self, row: int) -> None:
        index = self.index(row)
        self.dataChanged.emit(index, index)

    def _cooldown_rows(self) -> list[int]:
        return [i for i, s in enumerate(self._rows) if s.status is Status.COOLDOWN]

    @property
    def counting_down(self) -> bool:
        return bool(self._cooldown_rows())

    def _tick(self) -> None:
        for row in self._cooldown_rows():
            index = self.index(row)
            self.dataChanged.emit(index, index, list(self.COUNTDOWN_ROLES))
            self.countdownTicked.emit(self._rows[row].name)
