"""The main window: a left rail with two places, Chats (ui/chat/pane.py) and Servers
(ui/servers_place.py), menus and the status bar. Ctrl+1 / Ctrl+2 switch places.

The Chats place is not imported with the window: the first paint shows a placeholder of
the same geometry (ui/place_slot.py) and the app builds the real place on the next turns
of the loop (``DesktopApp.load_chats``); ``chats`` builds it on first use otherwise."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QByteArray, QEvent, QSettings, QSize, Qt, Signal
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence, QPalette
from PySide6.QtWidgets import (
    QButtonGroup,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QStackedWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from portico.paths import paths
from portico.prompts import Notice
from portico.runtime.events import LogLine, ServerState
from portico.ui.icons import app_icon, place_icon
from portico.ui.models.servers import ServerListModel
from portico.ui.place_slot import PlaceSlot
from portico.ui.servers_place import ServersPlace
from portico.ui.shortcuts import describe

if TYPE_CHECKING:
    from portico.ui.chat.pane import ChatsPlace
    from portico.ui.shortcuts_dialog import ShortcutsDialog


RAIL_ICON = 24  # px


def settings() -> QSettings:
    """UI state (geometry, splitter, last project) in the config dir (PORTICO_HOME aware)."""
    return QSettings(str(paths().config_dir / "ui.ini"), QSettings.Format.IniFormat)


class MainWindow(QMainWindow):
    openProjectRequested = Signal(str)
    configEditorRequested = Signal()
    quitRequested = Signal()
    serverActionRequested = Signal(str, str)  # action ("Restart", "Retry", ...), server
    addServerRequested = Signal()
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
        self.servers = ServersPlace(model)
        self.servers.serverActionRequested.connect(self.serverActionRequested)
        self.servers.addServerRequested.connect(self.addServerRequested)
        # What the window's users reach through it today (the place owns them).
        self.model = self.servers.model
        self.notices = self.servers.notices
        self.server_list = self.servers.server_list
        self.page = self.servers.page
        self.splitter = self.servers.splitter
        self._chats: ChatsPlace | None = None
        self.chats_slot = PlaceSlot("Chats")
        self.places = QStackedWidget()
        self.places.addWidget(self.chats_slot)
        self.places.addWidget(self.servers)
        self.rail = self._build_rail()
        central = QWidget()
        outer = QVBoxLayout(central)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(0)
        # The notices sit above both places: a server that needs the person (sign-in,
        # trust review, failure) is seen from Chats too, and its button works from there.
        place_layout = self.servers.layout()
        if place_layout is not None:
            place_layout.removeWidget(self.notices)
        notice_row = QHBoxLayout()
        notice_row.setContentsMargins(6, 6, 6, 0)
        notice_row.addWidget(self.notices)
        outer.addLayout(notice_row)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(0)
        row.addWidget(self.rail)
        row.addWidget(self.places, 1)
        outer.addLayout(row, 1)
        self.setCentralWidget(central)

        self.summary_label = QLabel("Starting…")
        self.summary_label.setAccessibleName("discovery summary")
        self.statusBar().addWidget(self.summary_label, 1)
        self._build_menus()
        self.resize(960, 620)

    # --- the Chats place ---------------------------------------------------------------

    @property
    def chats(self) -> ChatsPlace:
        """The Chats place, built (and its modules imported) on first use."""
        if self._chats is None:
            from portico.ui.chat.pane import ChatsPlace

            self._chats = ChatsPlace()
            self.chats_slot.fill(self._chats)
        return self._chats

    @property
    def chats_built(self) -> bool:
        return self._chats is not None

    # --- the rail ------------------------------------------------------------------------

    def _build_rail(self) -> QWidget:
        rail = QWidget()
        rail.setAccessibleName("places")
        column = QVBoxLayout(rail)
        column.setContentsMargins(4, 8, 4, 8)
        column.setSpacing(4)
        self.rail_group = QButtonGroup(rail)
        self.rail_group.setExclusive(True)
        self.rail_buttons: dict[str, QToolButton] = {}
        for index, (name, key) in enumerate((("Chats", "Ctrl+1"), ("Servers", "Ctrl+2"))):
            button = QToolButton()
            button.setText(name)
            button.setCheckable(True)
            button.setAutoRaise(True)
            button.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
            button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextUnderIcon)
            button.setIconSize(QSize(RAIL_ICON, RAIL_ICON))
            button.setMinimumWidth(64)
            button.setAccessibleName(name)
            button.setToolTip(f"{name} ({key})")
            button.clicked.connect(lambda _=False, i=index: self.show_place(i))
            self.rail_group.addButton(button, index)
            self.rail_buttons[name] = button
            column.addWidget(button)
            action = QAction(f"Go to {name}", self)
            describe(action, "Everywhere")
            action.setShortcut(QKeySequence(key))
            action.triggered.connect(lambda _=False, i=index: self.show_place(i))
            self.addAction(action)
        column.addStretch(1)
        self.rail_buttons["Chats"].setChecked(True)
        self._tint_rail()
        return rail

    def _tint_rail(self) -> None:
        """The rail's icons in the buttons' text colour (again when the palette changes)."""
        # The window's palette: its PaletteChange comes before the buttons inherit the new one.
        color = self.palette().color(QPalette.ColorRole.ButtonText)
        for name, button in self.rail_buttons.items():
            button.setIcon(place_icon(name.lower(), color))

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange and hasattr(self, "rail_buttons"):
            self._tint_rail()

    def show_place(self, index: int) -> None:
        self.places.setCurrentIndex(index)
        button = self.rail_group.button(index)
        if button is not None:
            button.setChecked(True)
        if index == 0:
            if self._chats is not None:  # still loading: the app focuses it once built
                self._chats.focus_input()
        else:
            self.server_list.setFocus(Qt.FocusReason.ShortcutFocusReason)

    def show_chats(self) -> None:
        self.show_place(0)

    def show_servers(self, server: str = "") -> None:
        """The Servers place, at ``server`` when given (the one that needs the person)."""
        self.show_place(1)
        if server:
            row = self.model.row_of(server)
            if row is not None:
                self.server_list.setCurrentIndex(self.model.index(row))

    @property
    def place(self) -> str:
        return "Chats" if self.places.currentIndex() == 0 else "Servers"

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
        for action in (self.open_project_action, self.config_editor_action, self.quit_action):
            describe(action, "Everywhere")
        server_menu = self.menuBar().addMenu("&Server")
        self.server_menu = server_menu
        server_menu.aboutToShow.connect(lambda: self.servers.fill_server_menu(server_menu))
        # The server actions (and their shortcuts: Ctrl+R, F5, ...) belong to the Servers
        # place and work only while it shows; so does their menu.
        self.places.currentChanged.connect(self._follow_place)
        self._follow_place(self.places.currentIndex())
        help_menu = self.menuBar().addMenu("&Help")
        self.shortcuts_action = QAction("&Keyboard Shortcuts", self)
        self.shortcuts_action.setShortcut(QKeySequence(Qt.Key.Key_F1))
        describe(self.shortcuts_action, "Everywhere")
        self.shortcuts_action.triggered.connect(self.show_shortcuts)
        help_menu.addAction(self.shortcuts_action)
        self.shortcuts_dialog: ShortcutsDialog | None = None

    def show_shortcuts(self) -> ShortcutsDialog:
        """F1: every shortcut of this window, from where each is bound."""
        from portico.ui.shortcuts import collect
        from portico.ui.shortcuts_dialog import ShortcutsDialog

        if self.shortcuts_dialog is not None:
            self.shortcuts_dialog.close()
        dialog = ShortcutsDialog(collect(self), self)
        dialog.destroyed.connect(lambda: setattr(self, "shortcuts_dialog", None))
        self.shortcuts_dialog = dialog
        dialog.show()  # non-modal
        return dialog

    def _follow_place(self, index: int) -> None:
        self.server_menu.menuAction().setVisible(self.places.widget(index) is self.servers)

    def server_actions(self, state: ServerState) -> list[tuple[str, bool]]:
        return self.servers.server_actions(state)

    def selected_state(self) -> ServerState | None:
        return self.servers.selected_state()

    def add_log_line(self, line: LogLine) -> None:
        self.servers.add_log_line(line)

    def set_summary(self, line: str) -> None:
        self.summary_label.setText(line)

    def post_notice(self, notice: Notice) -> None:
        self.servers.post_notice(notice)

    def post_auth_notice(self, server: str, reason: str) -> None:
        self.servers.post_auth_notice(server, reason)

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
        self.show_project(Path(folder))
        self.openProjectRequested.emit(folder)

    def show_project(self, folder: Path) -> None:
        """Make ``folder`` the project shown (its servers load with the next apply)."""
        self.project = folder
        self.setWindowTitle(f"Portico — {folder.name}")

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
            self.show_project(Path(project))

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
