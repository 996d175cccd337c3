"""The server actions, defined once: id, label, shortcut, and when each is enabled.

The window's Server menu, the list's context menu, the keyboard shortcuts, the notices'
buttons and the tray all name an action by its :class:`ActionId`; nothing routes by the
text of a menu entry. ``availability`` is a pure function of the selected server's
status (and scope), so the enabled state can never disagree between the places that
show an action.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenu, QWidget

from portico.runtime.events import ServerState, Status
from portico.ui.shortcuts import describe


class ActionId(StrEnum):
    RESTART = "restart"
    RETRY = "retry"
    SIGN_IN = "sign-in"
    REVIEW_TRUST = "review-trust"
    ENABLE = "enable"
    DISABLE = "disable"
    EDIT = "edit"
    REMOVE = "remove"


@dataclass(frozen=True)
class ActionSpec:
    id: ActionId
    label: str
    shortcut: str = ""


SPECS: dict[ActionId, ActionSpec] = {
    s.id: s
    for s in (
        ActionSpec(ActionId.RESTART, "Restart", "Ctrl+R"),
        ActionSpec(ActionId.RETRY, "Retry now", "F5"),
        ActionSpec(ActionId.SIGN_IN, "Sign in…", "Ctrl+Shift+A"),
        ActionSpec(ActionId.REVIEW_TRUST, "Review trust…", "Ctrl+Shift+T"),
        ActionSpec(ActionId.ENABLE, "Enable", "Ctrl+D"),
        ActionSpec(ActionId.DISABLE, "Disable", "Ctrl+D"),
        ActionSpec(ActionId.EDIT, "Edit…"),
        ActionSpec(ActionId.REMOVE, "Remove", "Delete"),
    )
}
MENU_ORDER = (
    ActionId.RESTART,
    ActionId.RETRY,
    ActionId.SIGN_IN,
    ActionId.REVIEW_TRUST,
    ActionId.ENABLE,  # or Disable: one entry, toggling
    ActionId.EDIT,
    ActionId.REMOVE,
)
RETRYABLE = frozenset({Status.FAILED, Status.COOLDOWN, Status.NEEDS_AUTH, Status.AWAITING_TRUST})
OFF = frozenset({Status.DISABLED, Status.STOPPED, Status.REJECTED})


def label(action: ActionId) -> str:
    return SPECS[action].label


def toggle_for(state: ServerState) -> ActionId:
    return ActionId.ENABLE if state.status is Status.DISABLED else ActionId.DISABLE


def availability(state: ServerState, scope: str | None = None) -> dict[ActionId, bool]:
    """Which actions apply to a server in this state (the menu shows all, greys the rest)."""
    status = state.status
    return {
        ActionId.RESTART: status not in OFF,
        ActionId.RETRY: status in RETRYABLE,
        ActionId.SIGN_IN: status is Status.NEEDS_AUTH,
        # Trust is reviewed for project servers: waiting, rejected, or trusted earlier.
        ActionId.REVIEW_TRUST: status in (Status.AWAITING_TRUST, Status.REJECTED)
        or (scope == "project" and status is not Status.DISABLED),
        # A rejected server is turned back on by its review, never by writing the file.
        ActionId.ENABLE: status is Status.DISABLED,
        ActionId.DISABLE: status is not Status.DISABLED and status is not Status.REJECTED,
        ActionId.EDIT: True,
        ActionId.REMOVE: True,
    }


def useful(state: ServerState) -> ActionId | None:
    """The one action a notice or the tray offers for a server in this state."""
    status = state.status
    if status is Status.NEEDS_AUTH:
        return ActionId.SIGN_IN
    if status in (Status.AWAITING_TRUST, Status.REJECTED):
        return ActionId.REVIEW_TRUST
    if status in (Status.FAILED, Status.COOLDOWN):
        return ActionId.RETRY
    return None


class ServerActions(QObject):
    """The QActions of the server menu, one each, following the selected server."""

    triggered = Signal(str, str)  # ActionId, server

    def __init__(self, window: QWidget, server_list: QWidget) -> None:
        super().__init__(window)
        self.actions: dict[ActionId, QAction] = {}
        self._state: ServerState | None = None
        self._scope: str | None = None
        for spec in SPECS.values():
            action = QAction(spec.label, window)
            action.setObjectName(f"action-{spec.id}")
            # Remove works in the server list only; the others while Servers shows.
            describe(
                action, "Servers: the server list" if spec.id is ActionId.REMOVE else "Servers"
            )
            if spec.shortcut and spec.id is not ActionId.DISABLE:
                action.setShortcut(QKeySequence(spec.shortcut))
                action.setShortcutVisibleInContextMenu(True)
            if spec.id is ActionId.REMOVE:
                # Delete removes a server only from the server list, never while typing
                action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
                server_list.addAction(action)
            elif spec.shortcut:
                action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
                window.addAction(action)
            action.triggered.connect(lambda _=False, a=spec.id: self.trigger(a))
            self.actions[spec.id] = action
        self.follow(None)

    def follow(self, state: ServerState | None, scope: str | None = None) -> None:
        """Derive every action's enabled state from the selected server."""
        self._state, self._scope = state, scope
        allowed = availability(state, scope) if state is not None else {}
        for action_id, action in self.actions.items():
            action.setEnabled(allowed.get(action_id, False))
        if state is not None and toggle_for(state) is ActionId.ENABLE:
            # Ctrl+D is Enable's shortcut while the server is off, Disable's otherwise.
            self.actions[ActionId.ENABLE].setShortcut(QKeySequence("Ctrl+D"))
            self.actions[ActionId.DISABLE].setShortcut(QKeySequence())
        else:
            self.actions[ActionId.DISABLE].setShortcut(QKeySequence("Ctrl+D"))
            self.actions[ActionId.ENABLE].setShortcut(QKeySequence())

    def trigger(self, action: ActionId) -> bool:
        """Run ``action`` on the selected server if it applies now."""
        state = self._state
        if state is None or not self.actions[action].isEnabled():
            return False
        self.triggered.emit(str(action), state.name)
        return True

    def fill(self, menu: QMenu) -> None:
        menu.clear()
        state = self._state
        if state is None:
            menu.addAction("No server selected").setEnabled(False)
            return
        for action_id in MENU_ORDER:
            if action_id is ActionId.ENABLE:
                action_id = toggle_for(state)
            menu.addAction(self.actions[action_id])
