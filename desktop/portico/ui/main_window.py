"""The main window: server list on the left, the selected server's page on the right."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QByteArray, QPoint, QSettings, QSize, Qt, Signal
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import (
    QFileDialog,
    QLabel,
    QListView,
    QMainWindow,
    QMenu,
    QPlainTextEdit,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from portico.paths import paths
from portico.prompts import Notice
from portico.runtime.events import LogLine, ServerState, Status
from portico.ui.icons import app_icon
from portico.ui.models.servers import ServerListModel
from portico.ui.notices import NoticeArea
from portico.ui.tray_state import Action, status_text, useful_action

PAGE_TABS = ("Overview", "Tools", "Prompts", "Resources", "Log")
LOG_LIMIT = 2000  # lines kept per server in the window
RETRYABLE = (Status.FAILED, Status.COOLDOWN, Status.NEEDS_AUTH, Status.AWAITING_TRUST)


def settings() -> QSettings:
    """UI state (geometry, splitter, last project) in the config dir (PORTICO_HOME aware)."""
    return QSettings(str(paths().config_dir / "ui.ini"), QSettings.Format.IniFormat)


class ServerPage(QTabWidget):
    """The selected server's tabs. Overview and Log work now; the rest arrive with the hub
    views (``set_placeholder`` marks where they go)."""

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
        """Replace a placeholder tab (Tools, Prompts, Resources) with its real view."""
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


class MainWindow(QMainWindow):
    openProjectRequested = Signal(str)
    configEditorRequested = Signal()
    quitRequested = Signal()
    serverActionRequested = Signal(str, str)  # action ("Restart", "Retry", ...), server
    firstPainted = Signal()

    def __init__(self, model: ServerListModel | None = None, *, tray_available: bool = False):
        super().__init__()
        self.setWindowTitle("Portico")
        self.setWindowIcon(app_icon())
        self.setAccessibleName("Portico main window")
        self.tray_available = tray_available
        self._told_about_tray = False
        self._painted = False
        self.project: Path | None = None
        self.model = model or ServerListModel(self)
        self._logs: dict[str, list[str]] = {}

        self.notices = NoticeArea()
        self.server_list = QListView()
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
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(self.server_list)
        self.splitter.addWidget(self.page)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([260, 640])
        central = QWidget()
        column = QVBoxLayout(central)
        column.setContentsMargins(6, 6, 6, 6)
        column.addWidget(self.notices)
        column.addWidget(self.splitter, 1)
        self.setCentralWidget(central)

        self.summary_label = QLabel("Starting…")
        self.summary_label.setAccessibleName("discovery summary")
        self.statusBar().addWidget(self.summary_label, 1)
        self._build_menus()
        self.resize(960, 620)

    # --- menus ---------------------------------------------------------------------------

    def _build_menus(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        self.open_project_action = QAction("Open &Project Folder…", self)
        self.open_project_action.setShortcut(QKeySequence.StandardKey.Open)
        self.open_project_action.triggered.connect(self.choose_project)
        file_menu.addAction(self.open_project_action)
        self.config_editor_action = QAction("&Config Editor", self)
        self.config_editor_action.setShortcut(QKeySequence("Ctrl+,"))
        self.config_editor_action.triggered.connect(self.configEditorRequested)
        file_menu.addAction(self.config_editor_action)
        file_menu.addSeparator()
        self.quit_action = QAction("&Quit", self)
        # Some platform themes (offscreen, bare X11) define no Quit binding: Ctrl+Q then.
        self.quit_action.setShortcuts(
            QKeySequence.keyBindings(QKeySequence.StandardKey.Quit) or [QKeySequence("Ctrl+Q")]
        )
        self.quit_action.triggered.connect(self.quitRequested)
        file_menu.addAction(self.quit_action)
        server_menu = self.menuBar().addMenu("&Server")
        self.server_menu = server_menu
        server_menu.aboutToShow.connect(lambda: self._fill_server_menu(server_menu))

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

    def _fill_server_menu(self, menu: QMenu) -> None:
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
        self._fill_server_menu(menu)
        menu.popup(self.server_list.viewport().mapToGlobal(pos))

    # --- state ---------------------------------------------------------------------------

    def selected_state(self) -> ServerState | None:
        index = self.server_list.currentIndex()
        if not index.isValid():
            return None
        return index.data(ServerListModel.StateRole)

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

    def set_summary(self, line: str) -> None:
        self.summary_label.setText(line)

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

    # --- project -------------------------------------------------------------------------

    def choose_project(self) -> None:
        dialog = QFileDialog(self, "Open Project Folder")
        dialog.setFileMode(QFileDialog.FileMode.Directory)
        dialog.setOption(QFileDialog.Option.ShowDirsOnly, True)
        if self.project is not None:
            dialog.setDirectory(str(self.project))
        dialog.fileSelected.connect(self.set_project)
        dialog.open()  # never exec(): no nested loop

    def set_project(self, folder: str) -> None:
        self.project = Path(folder)
        self.setWindowTitle(f"Portico — {self.project.name}")
        self.openProjectRequested.emit(folder)

    # --- persistence ---------------------------------------------------------------------

    def restore_state(self) -> None:
        store = settings()
        geometry = store.value("window/geometry")
        if isinstance(geometry, QByteArray) and not geometry.isEmpty():
            self.restoreGeometry(geometry)
        splitter = store.value("window/splitter")
        if isinstance(splitter, QByteArray) and not splitter.isEmpty():
            self.splitter.restoreState(splitter)
        project = store.value("project/last")
        if isinstance(project, str) and project and Path(project).is_dir():
            self.project = Path(project)
            self.setWindowTitle(f"Portico — {self.project.name}")

    def save_state(self) -> None:
        store = settings()
        store.setValue("window/geometry", self.saveGeometry())
        store.setValue("window/splitter", self.splitter.saveState())
        store.setValue("project/last", str(self.project) if self.project else "")
        store.sync()

    # --- events --------------------------------------------------------------------------

    def paintEvent(self, event) -> None:  # type: ignore[no-untyped-def]
        super().paintEvent(event)
        if not self._painted:
            self._painted = True
            self.firstPainted.emit()

    @property
    def painted(self) -> bool:
        return self._painted

    def closeEvent(self, event: QCloseEvent) -> None:
        self.save_state()
        if not self.tray_available:
            # Nowhere to hide to: closing the window quits.
            event.ignore()
            self.quitRequested.emit()
            return
        event.ignore()
        self.hide()
        if not self._told_about_tray:
            self._told_about_tray = True
            self.hiddenToTray.emit()

    hiddenToTray = Signal()


def _esc(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
