"""The conversation list of the Chats place: New, search as you type, pinned chats first
and the others grouped by day, rename (F2), pin, archive and delete (Delete) from the
keyboard or the context menu; a delete can be undone for ``UNDO_MS``; Archived shows the
archived chats instead."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass

from PySide6.QtCore import QPoint, Qt, QTimer, Signal, SignalInstance
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from portico.ui.shortcuts import Key, handled_by_widget

SEARCH_DELAY_MS = 120  # one search per pause in typing, not per key
UNDO_MS = 10_000  # how long a deleted chat's Undo stays; then it is removed for good
ID_ROLE = Qt.ItemDataRole.UserRole


@dataclass(frozen=True)
class ConversationRow:
    id: str
    title: str
    updated: float  # time.time()
    snippet: str = ""  # the matching text when searching
    pinned: bool = False
    archived: bool = False


def day_label(when: float, today: dt.date | None = None) -> str:
    day = dt.datetime.fromtimestamp(when).date()
    today = today or dt.date.today()
    delta = (today - day).days
    if delta <= 0:
        return "Today"
    if delta == 1:
        return "Yesterday"
    if delta < 7:
        return "Previous 7 days"
    if delta < 30:
        return "Previous 30 days"
    if day.year == today.year:
        return day.strftime("%B")
    return str(day.year)


_LIST = "Chats: the conversation list"
OPEN = Key(("Enter",), "Open the chat", _LIST)
RENAME = Key(("F2",), "Rename the chat", _LIST)
DELETE = Key(("Delete",), "Delete the chat (with undo)", _LIST)
handled_by_widget(OPEN, RENAME, DELETE)


class _List(QListWidget):
    renameKey = Signal()
    deleteKey = Signal()
    openKey = Signal()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        pressed = event.keyCombination()
        if OPEN.matches(pressed):
            self.openKey.emit()
            return
        if RENAME.matches(pressed):
            self.renameKey.emit()
            return
        if DELETE.matches(pressed):
            self.deleteKey.emit()
            return
        super().keyPressEvent(event)


class ConversationList(QWidget):
    selected = Signal(str)  # conversation id
    newRequested = Signal()
    renameRequested = Signal(str, str)  # id, new title
    deleteRequested = Signal(str)
    pinRequested = Signal(str, bool)  # id, pinned
    archiveRequested = Signal(str, bool)  # id, archived
    restoreRequested = Signal(str)  # Undo of a delete
    purgeRequested = Signal(str)  # the Undo went away: remove the deleted chat for good
    archivedToggled = Signal(bool)  # show the archived chats (True) or the others
    searchChanged = Signal(str)  # the query (after a short pause); "" shows all

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("conversations")
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        top = QHBoxLayout()
        self.search = QLineEdit()
        self.search.setPlaceholderText("Search chats")
        self.search.setAccessibleName("search chats")
        self.search.setClearButtonEnabled(True)
        top.addWidget(self.search, 1)
        self.new_button = QPushButton("New")
        self.new_button.setAccessibleName("New chat")
        self.new_button.setToolTip("New chat (Ctrl+N)")
        self.new_button.setAutoDefault(False)
        self.new_button.clicked.connect(self.newRequested)
        top.addWidget(self.new_button)
        column.addLayout(top)
        self.list = _List()
        self.list.setAccessibleName("conversation list")
        self.list.setWordWrap(True)
        self.list.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.list.customContextMenuRequested.connect(self._menu)
        self.list.currentItemChanged.connect(self._current_changed)
        self.list.renameKey.connect(self.rename_current)
        self.list.deleteKey.connect(self.delete_current)
        self.list.openKey.connect(self._open_current)
        column.addWidget(self.list, 1)
        self.undo_bar = QFrame()
        self.undo_bar.setAccessibleName("deleted chat")
        undo_row = QHBoxLayout(self.undo_bar)
        undo_row.setContentsMargins(4, 2, 4, 2)
        self.undo_label = QLabel()
        self.undo_label.setWordWrap(True)
        self.undo_label.setTextFormat(Qt.TextFormat.PlainText)  # a title is never markup
        undo_row.addWidget(self.undo_label, 1)
        self.undo_button = QPushButton("Undo")
        self.undo_button.setAccessibleName("Undo delete")
        self.undo_button.setAutoDefault(False)
        self.undo_button.clicked.connect(self._undo)
        undo_row.addWidget(self.undo_button)
        self.undo_bar.hide()
        column.addWidget(self.undo_bar)
        self._undo_id: str | None = None
        self._undo_timer = QTimer(self)
        self._undo_timer.setSingleShot(True)
        self._undo_timer.setInterval(UNDO_MS)
        self._undo_timer.timeout.connect(self._undo_expired)
        self.archived_button = QPushButton("Archived")
        self.archived_button.setCheckable(True)
        self.archived_button.setAccessibleName("Show archived chats")
        self.archived_button.setToolTip("Show the archived chats instead of the others")
        self.archived_button.setAutoDefault(False)
        self.archived_button.toggled.connect(self.archivedToggled)
        column.addWidget(self.archived_button)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(SEARCH_DELAY_MS)
        self._timer.timeout.connect(lambda: self.searchChanged.emit(self.search.text().strip()))
        self.search.textChanged.connect(lambda _t: self._timer.start())
        self._rows: list[ConversationRow] = []
        self._quiet = False

    def set_rows(self, rows: Sequence[ConversationRow], current: str | None = None) -> None:
        self._rows = list(rows)
        self._quiet = True
        self.list.clear()
        group = None
        ordered = sorted(rows, key=lambda r: (r.pinned, r.updated), reverse=True)
        for row in ordered:
            label = "Pinned" if row.pinned and not row.snippet else day_label(row.updated)
            if label != group:
                group = label
                header = QListWidgetItem(label)
                header.setFlags(Qt.ItemFlag.NoItemFlags)
                font = header.font()
                font.setBold(True)
                header.setFont(font)
                header.setData(Qt.ItemDataRole.AccessibleTextRole, f"{label}:")
                self.list.addItem(header)
            text = row.title or "New chat"
            if row.archived and row.snippet:
                text += " (archived)"
            if row.snippet:
                text += f"\n{row.snippet}"
            item = QListWidgetItem(text)
            item.setData(ID_ROLE, row.id)
            item.setToolTip(row.title or "New chat")
            self.list.addItem(item)
            if row.id == current:
                self.list.setCurrentItem(item)
        self._quiet = False
        if not rows and (self.search.text() or self.archived_button.isChecked()):
            shown = "No chat matches." if self.search.text() else "No archived chats."
            empty = QListWidgetItem(shown)
            empty.setFlags(Qt.ItemFlag.NoItemFlags)
            self.list.addItem(empty)

    def titles(self) -> list[str]:
        """The shown rows' titles, in order."""
        shown = {r.id: r.title or "New chat" for r in self._rows}
        return [shown[i] for i in self.ids() if i in shown]

    def row(self, conversation_id: str) -> ConversationRow | None:
        return next((r for r in self._rows if r.id == conversation_id), None)

    def ids(self) -> list[str]:
        return [
            str(self.list.item(i).data(ID_ROLE))
            for i in range(self.list.count())
            if self.list.item(i).data(ID_ROLE)
        ]

    def headers(self) -> list[str]:
        return [
            self.list.item(i).text()
            for i in range(self.list.count())
            if not self.list.item(i).data(ID_ROLE)
        ]

    def select(self, conversation_id: str) -> None:
        for i in range(self.list.count()):
            item = self.list.item(i)
            if item.data(ID_ROLE) == conversation_id:
                self._quiet = True
                self.list.setCurrentItem(item)
                self._quiet = False
                return

    def current_id(self) -> str | None:
        item = self.list.currentItem()
        value = item.data(ID_ROLE) if item is not None else None
        return str(value) if value else None

    def _current_changed(self, item: QListWidgetItem | None, _previous: object) -> None:
        if self._quiet or item is None:
            return
        value = item.data(ID_ROLE)
        if value:
            self.selected.emit(str(value))

    def _open_current(self) -> None:
        conversation_id = self.current_id()
        if conversation_id is not None:
            self.selected.emit(conversation_id)

    def _menu(self, pos: QPoint) -> None:
        item = self.list.itemAt(pos)
        if item is None or not item.data(ID_ROLE):
            return
        self.list.setCurrentItem(item)
        self.menu = self.actions_menu()
        self.menu.popup(self.list.viewport().mapToGlobal(pos))

    def actions_menu(self) -> QMenu:
        """Rename, Pin / Unpin, Archive / Unarchive and Delete for the current row."""
        row = self.row(self.current_id() or "")
        menu = QMenu(self)
        menu.setAccessibleName("chat actions")
        menu.addAction("Rename…", self.rename_current)
        pinned = row is not None and row.pinned
        menu.addAction(
            "Unpin" if pinned else "Pin", lambda: self._flag(self.pinRequested, "pinned")
        )
        archived = row is not None and row.archived
        menu.addAction(
            "Unarchive" if archived else "Archive",
            lambda: self._flag(self.archiveRequested, "archived"),
        )
        menu.addAction("Delete", self.delete_current)
        return menu

    def _flag(self, signal: SignalInstance, name: str) -> None:
        row = self.row(self.current_id() or "")
        if row is not None:
            signal.emit(row.id, not getattr(row, name))

    def _renamed(self, conversation_id: str, text: str) -> None:
        if text.strip():
            self.renameRequested.emit(conversation_id, text.strip())

    def rename_current(self) -> None:
        conversation_id = self.current_id()
        if conversation_id is None:
            return
        title = next((r.title for r in self._rows if r.id == conversation_id), "")
        dialog = QInputDialog(self)
        dialog.setWindowTitle("Rename chat")
        dialog.setLabelText("Title:")
        dialog.setTextValue(title)
        dialog.setAccessibleName("Rename chat")
        dialog.textValueSelected.connect(lambda text: self._renamed(conversation_id, text))
        dialog.open()  # never exec(): no nested loop
        self.rename_dialog = dialog

    def delete_current(self) -> None:
        conversation_id = self.current_id()
        if conversation_id is not None:
            self.deleteRequested.emit(conversation_id)

    def show_undo(self, conversation_id: str, title: str) -> None:
        """A chat was deleted: Undo brings it back until the bar goes (a second delete
        ends the first one's Undo)."""
        if self._undo_id is not None and self._undo_id != conversation_id:
            self.purgeRequested.emit(self._undo_id)
        self._undo_id = conversation_id
        self.undo_label.setText(f"Deleted “{title or 'New chat'}”.")
        self.undo_bar.show()
        self._undo_timer.start()

    def _undo(self) -> None:
        conversation_id, self._undo_id = self._undo_id, None
        self._undo_timer.stop()
        self.undo_bar.hide()
        if conversation_id is not None:
            self.restoreRequested.emit(conversation_id)

    def _undo_expired(self) -> None:
        conversation_id, self._undo_id = self._undo_id, None
        self.undo_bar.hide()
        if conversation_id is not None:
            self.purgeRequested.emit(conversation_id)
