"""Puts the real tabs into the main window's server page and keeps them fed; carries out
the server actions that write the config (Enable / Disable, Remove) or ask (Review trust);
adds the keyboard shortcuts and the re-auth notices.

Everything the tabs show is fetched on the runtime thread (``session.pages``) as plain
data; a refresh for a server that is no longer selected is dropped. A row change refreshes
only when the selected server really changed (its state or scope): the list's Cooldown
countdown ticks every second and must not refetch anything (house rule 3: no polling).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenu, QMessageBox, QVBoxLayout, QWidget

from portico.prompts import Notice
from portico.runtime.events import ServerState, Status
from portico.ui.facade import RuntimeThread
from portico.ui.pages.common import PageBackend
from portico.ui.pages.log import LogPage
from portico.ui.pages.overview import OverviewPage
from portico.ui.pages.prompts import PromptsPage
from portico.ui.pages.resources import ResourcesPage
from portico.ui.pages.tools import ToolsPage
from portico.ui.tray_state import Action

if TYPE_CHECKING:
    from portico.ui.main_window import MainWindow
    from portico.ui.tray import Tray

log = logging.getLogger(__name__)

# label in the Server menu -> shortcut (window-wide except Remove: only in the server list)
SHORTCUTS: dict[str, str] = {
    "Retry now": "F5",
    "Restart": "Ctrl+R",
    "Enable / Disable": "Ctrl+D",
    Action.AUTHORIZE.value: "Ctrl+Shift+A",
    "Review trust…": "Ctrl+Shift+T",
    "Remove": "Delete",
}
HANDLED = ("Enable", "Disable", "Remove", "Review trust…", "Review…")


class ServerPages(QObject):
    """Owns the Overview / Tools / Prompts / Resources / Log views of the window."""

    removeConfirmationShown = Signal(object)  # the QMessageBox
    configWritten = Signal(str, str)  # server, file

    def __init__(
        self,
        window: MainWindow,
        runtime: RuntimeThread,
        session: Callable[[], Any],
        reapply: Callable[[], Awaitable[None]],
        tray: Tray | None = None,
    ) -> None:
        super().__init__(window)
        self.window = window
        self.backend = PageBackend(runtime, session)
        self.reapply = reapply
        self.tray = tray
        self.current: str | None = None
        self._generation = 0
        self._last_seen: ServerState | None = None
        self._last_key: tuple[ServerState | None, Any] | None = None
        self._loaded: dict[str, str | None] = {"Prompts": None, "Resources": None}
        self.confirmation: QMessageBox | None = None
        self._lost: str | None = None  # the selected server's row left (a restart by apply)

        page = window.page
        self.overview = OverviewPage()
        self.tools = ToolsPage(self.backend)
        self.prompts = PromptsPage(self.backend)
        self.resources = ResourcesPage(self.backend)
        page.set_page("Overview", self.overview)
        page.set_page("Tools", self.tools)
        page.set_page("Prompts", self.prompts)
        page.set_page("Resources", self.resources)
        # Take the log view's tab away first, then give the view to the searchable page.
        host = QWidget()
        page.set_page("Log", host)
        self.log = LogPage(page.log_view)
        QVBoxLayout(host).addWidget(self.log)
        host.layout().setContentsMargins(0, 0, 0, 0)  # type: ignore[union-attr]
        page.setCurrentIndex(0)
        page.currentChanged.connect(lambda _i: self._tab_changed())

        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(60)
        self._debounce.timeout.connect(self.refresh)
        window.server_list.selectionModel().currentChanged.connect(lambda *_: self._schedule())
        window.model.dataChanged.connect(lambda *_: self._row_changed())
        window.model.countdownTicked.connect(self._countdown_ticked)
        window.model.rowLeaving.connect(self._row_leaving)
        window.model.rowsRemoved.connect(lambda *_: self._schedule())
        window.model.rowsInserted.connect(self._rows_arrived)
        window.model.modelReset.connect(lambda *_: self._schedule())
        window.server_menu.aboutToShow.connect(self._hint_shortcuts)
        self.actions = self._build_shortcuts()
        if tray is not None and tray.icon is not None:
            tray.icon.messageClicked.connect(self._tray_message_clicked)
        self.last_auth_server: str | None = None

    # --- refreshing ----------------------------------------------------------------------

    def _selected_key(self) -> tuple[ServerState | None, Any]:
        state = self.window.selected_state()
        model = self.window.model
        row = model.row_of(state.name) if state is not None else None
        scope = model.data(model.index(row), model.ScopeRole) if row is not None else None
        return state, scope

    def _row_changed(self) -> None:
        """Some row's data changed: refresh only if it is the selected server's real state."""
        if self._selected_key() == self._last_key:
            return
        self._schedule()

    def _countdown_ticked(self, name: str) -> None:
        """The selected server's retry countdown moved on: redraw its status line locally."""
        if name != self.current:
            return
        state, scope = self._selected_key()
        if self.overview.details is not None and self.overview.details.name == name:
            self.overview.show_details(self.overview.details, state)
        else:
            self.overview.show_state(state, scope)

    def _schedule(self) -> None:
        self._last_key = self._selected_key()
        state = self.window.selected_state()
        name = state.name if state else None
        if name != self.current:
            self._show_selection(state)
        elif (
            state is not None
            and self._last_seen is not None
            and state.status is not self._last_seen.status
        ):
            self._loaded = {k: None for k in self._loaded}
        self._last_seen = state
        self._debounce.start()

    def _row_leaving(self, name: str) -> None:
        if name == self.current:
            self._lost = name

    def _rows_arrived(self, _parent: Any, first: int, last: int) -> None:
        """A server that re-applying the config stopped and started again stays selected."""
        model = self.window.model
        for row in range(first, last + 1):
            if (
                self._lost is not None
                and model.data(model.index(row), model.NameRole) == self._lost
            ):
                self._lost = None
                self.window.server_list.setCurrentIndex(model.index(row))

    def _show_selection(self, state: ServerState | None) -> None:
        self.current = state.name if state else None
        self._generation += 1
        self._loaded = {k: None for k in self._loaded}
        scope = None
        if state is not None:
            row = self.window.model.row_of(state.name)
            if row is not None:
                scope = self.window.model.data(
                    self.window.model.index(row), self.window.model.ScopeRole
                )
        self.overview.details = None
        self.overview.show_state(state, scope)
        self.tools.set_tools(self.current, [])
        self.prompts.set_loading(self.current)
        self.resources.set_loading(self.current)

    def refresh(self) -> None:
        """Fetch the selected server's details and tools (and the open tab's lists)."""
        name = self.current
        if name is None or not self.backend.available:
            return
        self.backend.spawn(self._refresh(name, self._generation))
        self._tab_changed()

    async def _refresh(self, name: str, generation: int) -> None:
        try:
            details = await self.backend.run("details", name)
            tools = await self.backend.run("tools", name)
        except LookupError:
            return  # removed from the config meanwhile
        except Exception as exc:
            log.warning("could not read %s for its page: %s", name, exc)
            return
        if generation != self._generation:
            return
        self.overview.show_details(details, self.window.model.state(name))
        self.tools.set_tools(name, tools)

    def _tab_changed(self) -> None:
        tab = self.window.page.currentWidget()
        if tab is self.prompts:
            self._load_list("Prompts")
        elif tab is self.resources:
            self._load_list("Resources")

    def _load_list(self, kind: str) -> None:
        name = self.current
        if name is None or self._loaded.get(kind) == name or not self.backend.available:
            return
        state = self.window.model.state(name)
        view = self.prompts if kind == "Prompts" else self.resources
        if state is None or state.status is not Status.RUNNING:
            view.set_loading(name)
            view.set_error(f"{kind} appear here once the server is running.")
            return
        self._loaded[kind] = name
        self.backend.spawn(self._fetch_list(kind, name, self._generation))

    async def _fetch_list(self, kind: str, name: str, generation: int) -> None:
        view: PromptsPage | ResourcesPage = self.prompts if kind == "Prompts" else self.resources
        view.set_loading(name)
        try:
            items = await self.backend.run(kind.lower(), name)
        except Exception as exc:
            if generation == self._generation:
                self._loaded[kind] = None
                view.set_error(f"Could not list {kind.lower()}: {exc}")
            return
        if generation != self._generation:
            return
        if isinstance(view, PromptsPage):
            view.set_prompts(name, items)
        else:
            view.set_resources(name, items)

    # --- actions ---------------------------------------------------------------------------

    def handles(self, action: str) -> bool:
        return action in HANDLED

    def act(self, action: str, server: str) -> None:
        if action in ("Enable", "Disable"):
            self.backend.spawn(self._set_enabled(server, action == "Enable"))
        elif action == "Remove":
            self.confirm_remove(server)
        else:
            self.backend.spawn(self._review_trust(server))

    async def _set_enabled(self, server: str, enabled: bool) -> None:
        verb = "Enable" if enabled else "Disable"
        try:
            path = await self.backend.run("set_enabled", server, enabled)
        except Exception as exc:
            self.window.post_notice(Notice("error", f"{verb} {server} failed: {exc}", server))
            return
        self.configWritten.emit(server, str(path))
        await self.reapply()

    def confirm_remove(self, server: str) -> QMessageBox:
        box = QMessageBox(self.window)
        box.setIcon(QMessageBox.Icon.Question)
        box.setWindowTitle(f"Remove {server}?")
        box.setText(f"Remove the server “{server}” from its config file?")
        box.setInformativeText(
            "The server stops and its entry is deleted from the file that defines it. "
            "Other entries, comments and formatting stay as they are."
        )
        remove = box.addButton("&Remove", QMessageBox.ButtonRole.DestructiveRole)
        keep = box.addButton("&Keep", QMessageBox.ButtonRole.RejectRole)
        box.setDefaultButton(keep)  # Enter never removes
        box.setEscapeButton(keep)
        box.setAccessibleName(f"Remove {server}?")
        box.setModal(False)
        box.setWindowModality(Qt.WindowModality.NonModal)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)

        def clicked(button: Any) -> None:
            if button is remove:
                self.backend.spawn(self._remove(server))

        box.buttonClicked.connect(clicked)
        box.destroyed.connect(lambda *_: setattr(self, "confirmation", None))
        self.confirmation = box
        box.show()
        self.removeConfirmationShown.emit(box)
        return box

    async def _remove(self, server: str) -> None:
        try:
            path = await self.backend.run("remove", server)
        except Exception as exc:
            self.window.post_notice(Notice("error", f"Remove {server} failed: {exc}", server))
            return
        self.configWritten.emit(server, str(path))
        self.window.post_notice(Notice("info", f"Removed {server} from {path}.", server))
        await self.reapply()

    async def _review_trust(self, server: str) -> None:
        try:
            await self.backend.run("review_trust", server)
        except Exception as exc:
            self.window.post_notice(Notice("error", f"Review of {server} failed: {exc}", server))

    # --- keyboard ----------------------------------------------------------------------------

    def _build_shortcuts(self) -> dict[str, QAction]:
        actions: dict[str, QAction] = {}
        for label, key in SHORTCUTS.items():
            action = QAction(label, self.window)
            action.setShortcut(QKeySequence(key))
            if label == "Remove":
                # Delete removes a server only from the server list, never while typing
                action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
                self.window.server_list.addAction(action)
            else:
                action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
                self.window.addAction(action)
            action.triggered.connect(lambda _=False, a=label: self.trigger(a))
            actions[label] = action
        return actions

    def trigger(self, label: str) -> bool:
        """Run the menu action ``label`` on the selected server if the menu allows it now."""
        state = self.window.selected_state()
        if state is None:
            return False
        allowed = dict(self.window.server_actions(state))
        if label == "Enable / Disable":
            label = "Enable" if state.status is Status.DISABLED else "Disable"
        if not allowed.get(label):
            return False
        self.window.serverActionRequested.emit(label, state.name)
        return True

    def _hint_shortcuts(self) -> None:
        menu: QMenu = self.window.server_menu
        for action in menu.actions():
            text = action.text()
            key = SHORTCUTS.get("Enable / Disable" if text in ("Enable", "Disable") else text)
            if key and "\t" not in text:
                action.setText(f"{text}\t{key}")

    # --- re-auth -----------------------------------------------------------------------------

    def auth_required(self, server: str, reason: str) -> None:
        """A server parked in NeedsAuth: the window notice and a tray notification."""
        self.last_auth_server = server
        self.window.post_auth_notice(server, reason)
        if self.tray is not None:
            self.tray.notify(
                "Sign-in needed", f"{server} needs you to sign in again.", key=f"{server}:auth"
            )

    def _tray_message_clicked(self) -> None:
        if self.last_auth_server is not None:
            server, self.last_auth_server = self.last_auth_server, None
            self.window.serverActionRequested.emit(Action.AUTHORIZE.value, server)

    def close(self) -> None:
        self.backend.cancel_all()
