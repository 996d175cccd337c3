"""The conversation list of the Chats place: New, search as you type, grouped by day,
rename (F2) and delete (Delete) from the keyboard or the context menu."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass

from PySide6.QtCore import QPoint, Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QInputDialog,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

SEARCH_DELAY_MS = 120  # one search per pause in typing, not per key
ID_ROLE = Qt.ItemDataRole.UserRole


@dataclass(frozen=True)
class ConversationRow:
    id: str
    title: str
    updated: float  # time.time()
    snippet: str = ""  # the matching text when searching


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


class _List(QListWidget):
    renameKey = Signal()
    deleteKey = Signal()
    openKey = Signal()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self.openKey.emit()
            return
        if event.key() == Qt.Key.Key_F2:
            self.renameKey.emit()
            return
        if event.key() == Qt.Key.Key_Delete:
            self.deleteKey.emit()
            return
        super().keyPressEvent(event)


class ConversationList(QWidget):
    selected = Signal(str)  # conversation id
    newRequested = Signal()
    renameRequested = Signal(str, str)  # id, new title
    deleteRequested = Signal(str)
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
        for row in sorted(rows, key=lambda r: r.updated, reverse=True):
            label = day_label(row.updated)
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
            if row.snippet:
                text += f"\n{row.snippet}"
            item = QListWidgetItem(text)
            item.setData(ID_ROLE, row.id)
            item.setToolTip(row.title or "New chat")
            self.list.addItem(item)
            if row.id == current:
                self.list.setCurrentItem(item)
        self._quiet = False
        if not rows and self.search.text():
            empty = QListWidgetItem("No chat matches.")
            empty.setFlags(Qt.ItemFlag.NoItemFlags)
            self.list.addItem(empty)

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
        menu = QMenu(self)
        menu.addAction("Rename…", self.rename_current)
        menu.addAction("Delete", self.delete_current)
        menu.popup(self.list.viewport().mapToGlobal(pos))

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
