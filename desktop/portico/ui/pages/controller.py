"""Puts the real tabs into the Servers place's server page and keeps them fed; carries out
the server actions that write the config (Enable / Disable, Remove) or ask (Review trust);
posts the sign-in notices.

Everything the tabs show is fetched on the runtime thread (``session.pages``) as plain
data; a refresh for a server that is no longer selected is dropped. A row change refreshes
only when the selected server really changed (its state or scope): the list's Cooldown
countdown ticks every second and must not refetch anything (house rule 3: no polling).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import QMessageBox, QVBoxLayout, QWidget

from portico.config.sandbox_allow import allow_host
from portico.prompts import Notice
from portico.runtime.events import SandboxRefused, ServerState, Status
from portico.ui.actions import ActionId
from portico.ui.facade import RuntimeThread
from portico.ui.models.clock import clock
from portico.ui.ops import Ops
from portico.ui.pages.activity import ActivityPage
from portico.ui.pages.clients import ClientsPage
from portico.ui.pages.common import PageBackend
from portico.ui.pages.log import LogPage
from portico.ui.pages.overview import OverviewPage
from portico.ui.pages.prompts import PromptsPage
from portico.ui.pages.resources import ResourcesPage
from portico.ui.pages.tools import ToolsPage

if TYPE_CHECKING:
    from portico.ui.main_window import MainWindow
    from portico.ui.tray import Tray

log = logging.getLogger(__name__)


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
        ops: Ops | None = None,
    ) -> None:
        super().__init__(window)
        self.window = window
        self.place = window.servers
        self.ops = ops or Ops(window.post_notice)
        self.backend = PageBackend(runtime, session, self.ops)
        self.reapply = reapply
        self.tray = tray
        self.current: str | None = None
        self._generation = 0
        self._last_seen: ServerState | None = None
        self._last_key: tuple[ServerState | None, Any] | None = None
        self._loaded: dict[str, str | None] = {"Prompts": None, "Resources": None}
        self.confirmation: QMessageBox | None = None
        self._lost: str | None = None  # the selected server's row left (a restart by apply)
        # Traffic came while the Overview was hidden: its health refetches when it shows.
        self._overview_stale = False

        page = window.page
        self.overview = OverviewPage()
        self.tools = ToolsPage(self.backend)
        self.prompts = PromptsPage(self.backend)
        self.resources = ResourcesPage(self.backend)
        self.activity = ActivityPage(self.backend)
        page.set_page("Overview", self.overview)
        page.set_page("Tools", self.tools)
        page.set_page("Prompts", self.prompts)
        page.set_page("Resources", self.resources)
        page.set_page("Activity", self.activity)
        # Take the log view's tab away first, then give the view to the searchable page.
        host = QWidget()
        page.set_page("Log", host)
        self.log = LogPage(
            page.log_view, self.place.logs, lambda: self.current, on_level=self._log_level_chosen
        )
        QVBoxLayout(host).addWidget(self.log)
        host.layout().setContentsMargins(0, 0, 0, 0)  # type: ignore[union-attr]
        page.setCurrentIndex(0)
        page.currentChanged.connect(lambda _i: self._tab_changed())
        self.clients = ClientsPage(self.backend)
        self.place.set_clients_page(self.clients)
        self.place.clients_button.toggled.connect(lambda on: self.clients.refresh() if on else None)

        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(60)
        self._debounce.timeout.connect(self.refresh)
        self._activity_due = QTimer(self)
        self._activity_due.setSingleShot(True)
        self._activity_due.setInterval(250)
        self._activity_due.timeout.connect(self._follow_activity)
        window.server_list.selectionModel().currentChanged.connect(lambda *_: self._schedule())
        window.model.dataChanged.connect(lambda *_: self._row_changed())
        clock().ticked.connect(self._clock_ticked)
        window.model.rowLeaving.connect(self._row_leaving)
        window.model.rowsRemoved.connect(lambda *_: self._schedule())
        window.model.rowsInserted.connect(self._rows_arrived)
        window.model.modelReset.connect(lambda *_: self._schedule())
        if tray is not None and tray.icon is not None:
            tray.icon.messageClicked.connect(self._tray_message_clicked)
        self.last_auth_server: str | None = None

    def _log_level_chosen(self, level: str) -> None:
        """The Log tab's level: the server shown is asked for it (every level: debug)."""
        server = self.current
        if server is None or not self.backend.available:
            return
        wanted = level or "debug"
        self.backend.op(
            lambda pages: pages.set_log_level(server, wanted),
            f"Set the log level of {server}",
            server=server,
        ).run()

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

    def _clock_ticked(self) -> None:
        """The window's clock moved on: redraw the Overview's times ("Connected 5 s ago",
        "Retrying in 12 s") from what it shows, without fetching anything."""
        if self.current is None or not self.overview.isVisibleTo(self.window):
            return  # another tab or place is on show: nothing to redraw
        state, scope = self._selected_key()
        if self.overview.details is not None and self.overview.details.name == self.current:
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
        self._overview_stale = False  # the selection's refresh fetches it afresh
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
        self.activity.set_server(self.current)
        self.tools.set_tools(self.current, [])
        self.prompts.set_loading(self.current)
        self.resources.set_loading(self.current)

    def refresh(self) -> None:
        """Fetch the selected server's details and tools (and the open tab's lists)."""
        name = self.current
        if name is None or not self.backend.available:
            return
        self._overview_stale = False  # _refresh fetches the Overview's health too
        self.ops.spawn(self._refresh(name, self._generation), f"Show {name}", server=name)
        self._tab_changed()

    async def _refresh(self, name: str, generation: int) -> None:
        try:
            details = await self.backend.call(lambda pages: pages.details(name))
            tools = await self.backend.call(lambda pages: pages.tools(name))
            health = await self.backend.call(lambda pages: pages.health(name))
        except LookupError:
            return  # removed from the config meanwhile
        except Exception as exc:
            log.warning("could not read %s for its page: %s", name, exc)
            return
        if generation != self._generation:
            return
        self.overview.show_details(details, self.window.model.state(name))
        self.overview.show_health(health)
        self.tools.set_tools(name, tools)

    def activity_changed(self, server: str) -> None:
        """The hub recorded traffic of ``server``: the Activity tab and the Overview's
        health follow (coalesced; only for the selected server, only what is on show)."""
        if server == self.current:
            self._activity_due.start()

    def _follow_activity(self) -> None:
        name = self.current
        if name is None or not self.backend.available:
            return
        tab = self.window.page.currentWidget()
        if tab is self.activity:
            self.ops.spawn(self._fetch_activity(name), f"Show {name}'s activity", server=name)
        elif tab is self.overview:
            self.ops.spawn(
                self._fetch_overview(name, self._generation), f"Show {name}", server=name
            )
            return
        self._overview_stale = True

    async def _fetch_activity(self, name: str) -> None:
        since = self.activity.version if self.activity.server == name else 0
        try:
            version, changed = await self.backend.call(lambda p: p.activity(name, since))
        except LookupError:
            return
        self.activity.merge(name, version, changed)

    async def _fetch_overview(self, name: str, generation: int) -> None:
        try:
            details = await self.backend.call(lambda pages: pages.details(name))
            health = await self.backend.call(lambda pages: pages.health(name))
        except LookupError:
            return
        if generation == self._generation:
            self.overview.show_details(details, self.window.model.state(name))
            self.overview.show_health(health)

    def _tab_changed(self) -> None:
        tab = self.window.page.currentWidget()
        if tab is self.activity and self.current is not None and self.backend.available:
            self.activity.set_server(self.current)
            self.ops.spawn(
                self._fetch_activity(self.current),
                f"Show {self.current}'s activity",
                server=self.current,
            )
        stale = self._overview_stale and self.current is not None and self.backend.available
        if tab is self.overview and stale and self.current is not None:
            self._overview_stale = False
            self.ops.spawn(
                self._fetch_overview(self.current, self._generation),
                f"Show {self.current}",
                server=self.current,
            )
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
        self.ops.spawn(
            self._fetch_list(kind, name, self._generation),
            f"Show {name}'s {kind.lower()}",
            server=name,
        )

    async def _fetch_list(self, kind: str, name: str, generation: int) -> None:
        view: PromptsPage | ResourcesPage = self.prompts if kind == "Prompts" else self.resources
        view.set_loading(name)
        try:
            if isinstance(view, PromptsPage):
                prompts = await self.backend.call(lambda p: p.prompts(name))
                if generation == self._generation:
                    view.set_prompts(name, prompts)
            else:
                resources = await self.backend.call(lambda p: p.resources(name))
                if generation == self._generation:
                    view.set_resources(name, resources)
        except Exception as exc:
            if generation == self._generation:
                self._loaded[kind] = None
                view.set_error(f"Could not list {kind.lower()}: {exc}")

    # --- actions ---------------------------------------------------------------------------

    def set_enabled(self, server: str, enabled: bool) -> None:
        verb = "Enable" if enabled else "Disable"
        (
            self.backend.op(
                lambda p: p.set_enabled(server, enabled), f"{verb} {server}", server=server
            )
            .success(lambda path: self._written(server, path))
            .run()
        )

    async def _written(self, server: str, path: Any, said: str | None = None) -> None:
        self.configWritten.emit(server, str(path))
        if said:
            self.window.post_notice(Notice("info", said, server, kind="removed"))
        await self.reapply()

    def review_trust(self, server: str) -> None:
        self.backend.op(
            lambda p: p.review_trust(server), f"Review of {server}", server=server
        ).run()

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
                (
                    self.backend.op(lambda p: p.remove(server), f"Remove {server}", server=server)
                    .success(
                        lambda path: self._written(server, path, f"Removed {server} from {path}.")
                    )
                    .run()
                )

        box.buttonClicked.connect(clicked)
        box.destroyed.connect(lambda *_: setattr(self, "confirmation", None))
        self.confirmation = box
        box.show()
        self.removeConfirmationShown.emit(box)
        return box

    # --- re-auth -----------------------------------------------------------------------------

    def auth_required(self, server: str, reason: str) -> None:
        """A server parked in NeedsAuth: the window notice and a tray notification."""
        self.last_auth_server = server
        self.window.post_auth_notice(server, reason)
        if self.tray is not None:
            self.tray.notify(
                "Sign-in needed", f"{server} needs you to sign in.", key=f"{server}:auth"
            )

    # --- the sandbox refused a host ---------------------------------------------------------

    def sandbox_refused(self, refused: SandboxRefused) -> None:
        """A notice offering to allow the host; Allow writes it into the server's file off
        the GUI thread. The config watcher's reload then restarts the server (its sandbox
        is part of its digest); a project server waits for its trust review first."""

        def allow() -> None:
            self.ops.spawn(
                asyncio.to_thread(allow_host, refused.spec, refused.entry),
                f"Allowing {refused.entry} for {refused.server}",
                server=refused.server,
            )

        self.window.post_sandbox_notice(refused, allow)

    def _tray_message_clicked(self) -> None:
        if self.last_auth_server is not None:
            server, self.last_auth_server = self.last_auth_server, None
            self.window.serverActionRequested.emit(str(ActionId.SIGN_IN), server)

    def close(self) -> None:
        self.ops.cancel_all()
