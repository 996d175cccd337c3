"""The Servers place: the notices, the server list, the selected server's pages, and the
empty state with its Add server… button.

The window shows it as one of its places; it forwards ``serverActionRequested`` and
``addServerRequested`` to whoever carries them out (the app, the add-server flow).
"""

from __future__ import annotations

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

from portico.prompts import Notice
from portico.runtime.events import LogLine, ServerState, Status
from portico.ui.models.servers import ServerListModel
from portico.ui.notices import NoticeArea
from portico.ui.tray_state import Action, status_text, useful_action

PAGE_TABS = ("Overview", "Tools", "Prompts", "Resources", "Log")
LOG_LIMIT = 2000  # lines kept per server in the window
RETRYABLE = (Status.FAILED, Status.COOLDOWN, Status.NEEDS_AUTH, Status.AWAITING_TRUST)
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
            label = QLabel(f"{name} appear here once the server is running.")
            label.setAlignment(Qt.AlignmentFlag.AlignCenter)
            self.placeholders[name] = label
            self.addTab(label, f"&{name}")
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
            ("Status", status_text(state)),
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


class ServersPlace(QWidget):
    """Notices above; the server list and the selected server's pages side by side."""

    serverActionRequested = Signal(str, str)  # action ("Restart", "Retry", ...), server
    addServerRequested = Signal()

    def __init__(self, model: ServerListModel | None = None, parent: QWidget | None = None):
        super().__init__(parent)
        self.setAccessibleName("Servers")
        self.model = model or ServerListModel(self)
        self._logs: dict[str, list[str]] = {}

        self.notices = NoticeArea()
        self.add_button = QPushButton(ADD_SERVER)
        self.add_button.setAccessibleName("Add server")
        self.add_button.setToolTip("Add a server to your config")
        self.add_button.clicked.connect(self.addServerRequested)
        toolbar = QHBoxLayout()
        toolbar.setContentsMargins(0, 0, 0, 0)
        toolbar.addWidget(self.add_button)
        toolbar.addStretch(1)

        self.server_list = ServerListView()
        self.server_list.setModel(self.model)
        self.server_list.setAccessibleName("servers")
        self.server_list.setUniformItemSizes(False)
        self.server_list.setSpacing(3)
        self.server_list.setIconSize(QSize(20, 20))
        self.server_list.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.server_list.customContextMenuRequested.connect(self._context_menu)
        self.server_list.selectionModel().currentChanged.connect(lambda *_: self._show_selected())
        self.model.dataChanged.connect(lambda *_: self._show_selected())
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

    def _show_empty(self) -> None:
        empty = self.model.rowCount() == 0 and self._configured is False
        self.pages.setCurrentWidget(self.empty if empty else self.page)

    @property
    def is_empty(self) -> bool:
        return self.pages.currentWidget() is self.empty

    # --- menus ---------------------------------------------------------------------------

    def server_actions(self, state: ServerState) -> list[tuple[str, bool]]:
        """(label, enabled) for the context menu of one server."""
        useful = useful_action(state.status)
        return [
            ("Restart", state.status not in (Status.DISABLED, Status.STOPPED)),
            ("Retry now", state.status in RETRYABLE),
            (Action.AUTHORIZE.value, useful is Action.AUTHORIZE),
            ("Review trust…", useful is Action.REVIEW),
            # Enable / Disable and Remove write to the defining file (ui/pages/controller.py)
            ("Enable" if state.status is Status.DISABLED else "Disable", True),
            ("Edit…", True),
            ("Remove", True),
        ]

    def fill_server_menu(self, menu: QMenu) -> None:
        menu.clear()
        state = self.selected_state()
        if state is None:
            menu.addAction("No server selected").setEnabled(False)
            return
        for label, enabled in self.server_actions(state):
            action = menu.addAction(label)
            action.setEnabled(enabled)
            action.triggered.connect(
                lambda _=False, a=label, n=state.name: self.serverActionRequested.emit(a, n)
            )

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

    def _show_selected(self) -> None:
        state = self.selected_state()
        scope = None
        if state is not None:
            scope = self.model.data(
                self.model.index(self.model.row_of(state.name) or 0), ServerListModel.ScopeRole
            )
        self.page.show_state(state, scope)
        name = state.name if state else None
        lines = self._logs.get(name, []) if name else []
        if self.page.log_view.property("server") != name:
            self.page.log_view.setProperty("server", name)
            self.page.log_view.setPlainText("\n".join(lines))

    def add_log_line(self, line: LogLine) -> None:
        prefix = "" if line.stream == "stderr" else "[portico] "
        lines = self._logs.setdefault(line.server, [])
        lines.append(prefix + line.text)
        del lines[:-LOG_LIMIT]
        if self.page.log_view.property("server") == line.server:
            self.page.log_view.appendPlainText(prefix + line.text)

    def post_notice(self, notice: Notice) -> None:
        self.notices.post(notice)

    def post_auth_notice(self, server: str, reason: str) -> None:
        text = f"{server} needs you to sign in again."
        if reason:
            text += f" ({reason})"
        self.notices.post(
            Notice("warning", text, server=server),
            action=(
                Action.AUTHORIZE.value,
                lambda: self.serverActionRequested.emit(Action.AUTHORIZE.value, server),
            ),
        )


def _esc(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
