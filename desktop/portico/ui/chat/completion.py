"""The completion popup under the chat input: ``/`` commands and prompts, ``@`` resources,
tool names after ``/call``.

A :class:`Completion` is one row (what is inserted, what is shown, a hint). The input asks
a :class:`CompletionSource` for rows; a source may answer later (resources are fetched
lazily from the servers) by calling ``popup.offer`` again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from PySide6.QtCore import QModelIndex, QSortFilterProxyModel, Qt, Signal
from PySide6.QtGui import QStandardItem, QStandardItemModel
from PySide6.QtWidgets import QAbstractItemView, QFrame, QListView, QVBoxLayout, QWidget

MAX_ROWS = 10


@dataclass(frozen=True)
class Completion:
    insert: str  # the text that replaces the typed word ("/summarize ", "@file:///a.txt ")
    label: str  # what the row shows ("/summarize")
    hint: str = ""  # argument hints or a description ("topic (required), style")
    kind: str = ""  # "command", "prompt", "resource", "template", "tool"
    target: tuple[str, str] | None = None  # a resource: (server, uri), chosen as a chip


# A source gets (trigger, typed word without the trigger) and returns rows now.
CompletionSource = Callable[[str, str], Sequence[Completion]]


class CompletionPopup(QFrame):
    """A list shown under the input; the input keeps the keyboard focus and forwards
    Up / Down / Enter / Tab / Esc here while it is visible."""

    chosen = Signal(object)  # Completion

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAccessibleName("completions")
        self.model = QStandardItemModel(self)
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setFilterRole(Qt.ItemDataRole.UserRole + 1)
        self.proxy.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.view = QListView()
        self.view.setModel(self.proxy)
        self.view.setAccessibleName("completion list")
        self.view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        # Tab from the input picks a row (the input keeps the focus); a click neither.
        self.view.setFocusPolicy(Qt.FocusPolicy.TabFocus)
        self.view.setUniformItemSizes(True)
        self.view.clicked.connect(lambda index: self._choose(index))
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.view)
        self.hide()

    def offer(self, rows: Sequence[Completion], needle: str = "") -> None:
        self.model.clear()
        for row in rows:
            text = row.label + (f"  —  {row.hint}" if row.hint else "")
            item = QStandardItem(text)
            item.setData(row, Qt.ItemDataRole.UserRole)
            item.setData(f"{row.label} {row.hint}", Qt.ItemDataRole.UserRole + 1)
            item.setToolTip(text)
            item.setData(text, Qt.ItemDataRole.AccessibleTextRole)
            self.model.appendRow(item)
        self.filter(needle)

    def filter(self, needle: str) -> None:
        self.proxy.setFilterFixedString(needle)
        rows = self.proxy.rowCount()
        if rows == 0:
            self.hide()
            return
        self.view.setCurrentIndex(self.proxy.index(0, 0))
        height = self.view.sizeHintForRow(0) * min(rows, MAX_ROWS) + 6
        self.setFixedHeight(max(height, 24))
        self.show()
        self.raise_()

    def rows(self) -> list[Completion]:
        return [
            self.proxy.index(r, 0).data(Qt.ItemDataRole.UserRole)
            for r in range(self.proxy.rowCount())
        ]

    def move_selection(self, step: int) -> None:
        rows = self.proxy.rowCount()
        if not rows:
            return
        current = self.view.currentIndex().row()
        self.view.setCurrentIndex(self.proxy.index((current + step) % rows, 0))

    def accept_current(self) -> bool:
        index = self.view.currentIndex()
        if not index.isValid():
            return False
        self._choose(index)
        return True

    def _choose(self, index: QModelIndex) -> None:
        row = index.data(Qt.ItemDataRole.UserRole)
        self.hide()
        if isinstance(row, Completion):
            self.chosen.emit(row)
