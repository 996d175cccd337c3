"""The Servers place: the notices, the server list, the selected server's pages, and the
empty state with its Add server… button.

The window shows it as one of its places; it forwards ``serverActionRequested`` and
``addServerRequested`` to whoever carries them out (the app, the add-server flow).
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QPoint, QSize, Qt, Signal
from PySide6.QtGui import QContextMenuEvent, QKeyEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListView,
    QMenu,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from portico.config.model import Scope
from portico.prompts import Notice
from portico.runtime.events import LogLine, SandboxRefused, ServerState, Status
from portico.ui.actions import (
    MENU_ORDER,
    ActionId,
    ServerActions,
    availability,
    label,
    toggle_for,
)
from portico.ui.models.clock import clock
from portico.ui.models.servers import ServerListModel
from portico.ui.notices import NoticeArea
from portico.ui.pages.log_lines import LOG_LIMIT, LogBook
from portico.ui.text import rich
from portico.ui.tray_state import status_text

PAGE_TABS = ("Overview", "Tools", "Prompts", "Resources", "Activity", "Log")
ADD_SERVER = "Add server…"


class ServerPage(QTabWidget):
    """The selected server's tabs (the real views replace the placeholders: ``set_page``)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("server page")
        self.tabBar().setAccessibleName("server page tabs")
        self.overview = QLabel("Select a server on the left.")
        self.overview.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.overview.setWordWrap(True)
        self.overview.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.overview.setMargin(12)
        self.addTab(self.overview, "&Overview")
        self.placeholders: dict[str, QLabel] = {}
        for name in ("Tools", "Prompts", "Resources"):
            hint = QLabel(f"{name} appear here once the server is running.")
            hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
            self.placeholders[name] = hint
            self.addTab(hint, f"&{name}")
        self.activity_placeholder = QLabel("Requests and notifications appear here.")
        self.addTab(self.activity_placeholder, "Acti&vity")
        self.log_view = QPlainTextEdit()
        self.log_view.setReadOnly(True)
        self.log_view.setAccessibleName("server log")
        self.log_view.setMaximumBlockCount(LOG_LIMIT)
        self.addTab(self.log_view, "&Log")

    def set_page(self, name: str, widget: QWidget) -> None:
        """Replace a tab (Overview, Tools, Prompts, Resources, Log) with its real view."""
        index = PAGE_TABS.index(name)
        label = self.tabText(index)
        self.removeTab(index)
        self.insertTab(index, widget, label)

    def show_state(self, state: ServerState | None, scope: str | None) -> None:
        if state is None:
            self.overview.setText("Select a server on the left.")
            return
        rows = [
            ("Server", state.name),
            ("Status", status_text(state, clock().now())),
            ("Tools", str(state.tool_count)),
        ]
        if scope:
            rows.append(("Scope", scope))
        if state.error:
            rows.append(("Last error", state.error))
        html = "".join(
            f"<tr><td style='padding-right:12px'><b>{k}</b></td><td>{_esc(v)}</td></tr>"
            for k, v in rows
        )
        self.overview.setText(f"<table>{html}</table>")


class ServerListView(QListView):
    """The server list; Shift+F10 and the Menu key open the context menu too."""

    def keyPressEvent(self, event: QKeyEvent) -> None:
        menu_key = event.key() == Qt.Key.Key_Menu or (
            event.key() == Qt.Key.Key_F10 and event.modifiers() == Qt.KeyboardModifier.ShiftModifier
        )
        if menu_key and self.currentIndex().isValid():
            rect = self.visualRect(self.currentIndex())
            self.customContextMenuRequested.emit(rect.center())
            return
        super().keyPressEvent(event)

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:
        if event.reason() == QContextMenuEvent.Reason.Keyboard:
            if self.currentIndex().isValid():
                rect = self.visualRect(self.currentIndex())
                self.customContextMenuRequested.emit(rect.center())
            return
        super().contextMenuEvent(event)


class EmptyServers(QWidget):
    """What the page area shows when no server is configured."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("no servers")
        column = QVBoxLayout(self)
        column.addStretch(1)
        self.title = QLabel("<b>No servers yet</b>")
        self.title.setAlignment(Qt.AlignmentFlag.AlignCenter)
        column.addWidget(self.title)
        self.text = QLabel(
            "Servers give your chats tools, prompts and resources. Add one to get started."
        )
        self.text.setWordWrap(True)
        self.text.setAlignment(Qt.AlignmentFlag.AlignCenter)
        column.addWidget(self.text)
        row = QHBoxLayout()
        row.addStretch(1)
        self.add_button = QPushButton(ADD_SERVER)
        self.add_button.setAccessibleName("Add server")
        row.addWidget(self.add_button)
        row.addStretch(1)
        column.addLayout(row)
        column.addStretch(2)


def auth_notice_text(server: str, reason: str) -> str:
    """The sign-in notice, worded for the app: the runtime's reason says how to sign in
    from a terminal too ("Run `portico mcp login …` or use Sign in in the app"); next to
    the Sign in… button only the why is worth reading."""
    why = reason
    if "is waiting: " in why:
        why = why.split("is waiting: ", 1)[1]
    why = why.split(". Run `portico", 1)[0].strip().rstrip(".")
    if not why or why == "it needs a sign-in":
        return f"{server} needs you to sign in before it can connect."
    if "expired" in why:
        return f"{server}: {why}. Sign in again to reconnect."
    return f"{server} needs you to sign in ({why})."


class ServersPlace(QWidget):
    """Notices above; the server list and the selected server's pages side by side."""

    serverActionRequested = Signal(str, str)  # ActionId, server
    addServerRequested = Signal()

    def __init__(self, model: ServerListModel | None = None, parent: QWidget | None = None):
        super().__init__(parent)
        self.setAccessibleName("Servers")
        self.model = model or ServerListModel(self)
        self.logs = LogBook()
        self._seen: dict[str, Status] = {}
        self._waiting: tuple[str, ...] = ()

        self.notices = NoticeArea()
        self.add_button = QPushButton(ADD_SERVER)
        self.add_button.setAccessibleName("Add server")
        self.add_button.setToolTip("Add a server to your config")
        self.add_button.clicked.connect(self.addServerRequested)
        # The Clients view (ui/pages/clients.py) takes the page area while this is on.
        self.clients_button = QPushButton("&Clients")
        self.clients_button.setAccessibleName("Clients")
        self.clients_button.setToolTip("Other MCP clients using your servers through Portico")
        self.clients_button.setCheckable(True)
        self.clients_button.toggled.connect(lambda _on: self._show_empty())
        self.clients_page: QWidget | None = None
        toolbar = QHBoxLayout()
        toolbar.setContentsMargins(0, 0, 0, 0)
        toolbar.addWidget(self.add_button)
        toolbar.addStretch(1)
        toolbar.addWidget(self.clients_button)

        self.server_list = ServerListView()
        self.server_list.setModel(self.model)
        self.server_list.setAccessibleName("servers")
        self.server_list.setUniformItemSizes(False)
        self.server_list.setSpacing(3)
        self.server_list.setIconSize(QSize(20, 20))
        self.server_list.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.server_list.customContextMenuRequested.connect(self._context_menu)
        self.commands = ServerActions(self, self.server_list)
        self.commands.triggered.connect(self.serverActionRequested)
        self.server_list.selectionModel().currentChanged.connect(lambda *_: self._show_selected())
        self.server_list.clicked.connect(lambda _index: self.clients_button.setChecked(False))
        self.model.dataChanged.connect(lambda *_: self._show_selected())
        self.model.statesChanged.connect(self._states_changed)
        self.page = ServerPage()
        self.empty = EmptyServers()
        self.empty.add_button.clicked.connect(self.addServerRequested)
        self.pages = QStackedWidget()
        self.pages.addWidget(self.page)
        self.pages.addWidget(self.empty)
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(self.server_list)
        self.splitter.addWidget(self.pages)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([260, 640])
        column = QVBoxLayout(self)
        column.setContentsMargins(6, 6, 6, 6)
        column.addWidget(self.notices)
        column.addLayout(toolbar)
        column.addWidget(self.splitter, 1)
        for signal in (self.model.rowsInserted, self.model.rowsRemoved, self.model.modelReset):
            signal.connect(lambda *_: self._show_empty())
        self._configured: bool | None = None  # None: not known yet (the config not read)

    # --- empty state ---------------------------------------------------------------------

    def set_configured(self, count: int) -> None:
        """How many servers the config names (0 shows the empty state)."""
        self._configured = count > 0
        self._show_empty()

    def set_clients_page(self, page: QWidget) -> None:
        self.clients_page = page
        self.pages.addWidget(page)
        self._show_empty()

    def _show_empty(self) -> None:
        if self.clients_button.isChecked() and self.clients_page is not None:
            self.pages.setCurrentWidget(self.clients_page)
            return
        empty = self.model.rowCount() == 0 and self._configured is False
        self.pages.setCurrentWidget(self.empty if empty else self.page)

    @property
    def is_empty(self) -> bool:
        return self.pages.currentWidget() is self.empty

    # --- menus ---------------------------------------------------------------------------

    def server_actions(self, state: ServerState) -> list[tuple[str, bool]]:
        """(label, enabled) as the menus show them for ``state``."""
        allowed = availability(state, self.scope_of(state.name))
        out = []
        for action_id in MENU_ORDER:
            if action_id is ActionId.ENABLE:
                action_id = toggle_for(state)
            out.append((label(action_id), allowed[action_id]))
        return out

    def fill_server_menu(self, menu: QMenu) -> None:
        self.commands.fill(menu)

    def _context_menu(self, pos: QPoint) -> None:
        index = self.server_list.indexAt(pos)
        if not index.isValid():
            return
        self.server_list.setCurrentIndex(index)
        menu = QMenu(self)
        self.fill_server_menu(menu)
        self.context_menu = menu
        menu.popup(self.server_list.viewport().mapToGlobal(pos))

    # --- state ---------------------------------------------------------------------------

    def selected_state(self) -> ServerState | None:
        index = self.server_list.currentIndex()
        if not index.isValid():
            return None
        state: ServerState | None = index.data(ServerListModel.StateRole)
        return state

    def scope_of(self, name: str) -> str | None:
        row = self.model.row_of(name)
        if row is None:
            return None
        scope: str | None = self.model.data(self.model.index(row), ServerListModel.ScopeRole)
        return scope

    def _show_selected(self) -> None:
        state = self.selected_state()
        scope = self.scope_of(state.name) if state is not None else None
        self.commands.follow(state, scope)
        self.page.show_state(state, scope)
        name = state.name if state else None
        if self.page.log_view.property("server") != name:
            self.page.log_view.setProperty("server", name)
            self.logs.show(self.page.log_view, name)

    def add_log_line(self, line: LogLine) -> None:
        text = self.logs.add(line)
        if text is not None and self.page.log_view.property("server") == line.server:
            self.logs.append_to(self.page.log_view, line, text)

    # --- notices -------------------------------------------------------------------------

    def post_notice(self, notice: Notice) -> None:
        self.notices.post(notice)

    def post_auth_notice(self, server: str, reason: str) -> None:
        text = auth_notice_text(server, reason)
        self.notices.post(
            Notice("warning", text, server=server, kind="auth"),
            action=(label(ActionId.SIGN_IN), lambda: self._request(ActionId.SIGN_IN, server)),
        )

    def post_sandbox_notice(self, refused: SandboxRefused, allow: Callable[[], None]) -> None:
        """The sandbox refused a host: one notice per server (a newer refusal replaces it),
        offering to add the host to the server's ``sandbox.network.allow``."""
        self.notices.post(
            Notice("warning", sandbox_notice_text(refused), server=refused.server, kind=SANDBOX),
            action=(f"Allow {refused.host} for this server", allow),
        )

    def _request(self, action: ActionId, server: str) -> None:
        self.serverActionRequested.emit(str(action), server)

    def _states_changed(self) -> None:
        """Notices follow the servers: a server that runs again (or is turned off or
        removed) takes its notices with it; one notice lists the servers awaiting trust."""
        states = {s.name: s for s in self.model.states()}
        for name in list(self._seen):
            if name not in states:
                del self._seen[name]
                self.notices.resolve(name)
        for name, state in states.items():
            if self._seen.get(name) is state.status:
                continue
            self._seen[name] = state.status
            if state.status in (Status.RUNNING, Status.LAZY, Status.DISABLED):
                self.notices.resolve(name)
            elif state.status is not Status.NEEDS_AUTH:
                self.notices.resolve(name, "auth")
        self._trust_notice([s for s in states.values() if s.status is Status.AWAITING_TRUST])

    def _trust_notice(self, waiting: list[ServerState]) -> None:
        # by name: servers reach AwaitingTrust in the order their reviews were queued,
        # a race, and the notice (its text and Review…) should not depend on it
        waiting = sorted(waiting, key=lambda s: s.name)
        names_now = tuple(s.name for s in waiting)
        if names_now == self._waiting:
            return
        self._waiting = names_now
        if not waiting:
            self.notices.resolve(None, "trust-waiting")
            return
        names = ", ".join(s.name for s in waiting)
        if len(waiting) == 1:
            text = f"The project server {names} waits for your trust review before it starts."
        else:
            text = f"{len(waiting)} project servers wait for your trust review: {names}."
        first = waiting[0].name
        self.notices.post(
            Notice("warning", text, kind="trust-waiting"),
            action=("Review…", lambda: self._request(ActionId.REVIEW_TRUST, first)),
        )


SANDBOX = "sandbox-refused"


def sandbox_notice_text(refused: SandboxRefused) -> str:
    spec = refused.spec
    text = (
        f"The sandbox refused {refused.server} a connection to {refused.entry}."
        f" Allow adds '{refused.entry}' to its sandbox.network.allow in {spec.source.path}"
        " and restarts it."
    )
    if spec.source.scope is Scope.PROJECT:
        text += " That is the project's file: its next trust review names the wider access."
    return text


def _esc(text: str) -> str:
    return rich(text)
