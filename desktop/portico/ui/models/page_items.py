"""Item models for the Tools, Prompts and Resources tabs, and the one view they share.

Each tab shows a list of plain snapshot records (``ToolInfo``, ``PromptInfo``,
``ResourceInfo``) that the controller fetches when the hub's events say the server
changed; the model is a table over those records, with its columns described once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QBrush, QIcon
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView, QWidget

from portico.ui.text import plain, tip

T = TypeVar("T")
_Index = QModelIndex | QPersistentModelIndex


@dataclass(frozen=True)
class Column(Generic[T]):
    header: str
    text: Callable[[T], str]
    tip: Callable[[T], str | None] | None = None
    brush: Callable[[T], QBrush | None] | None = None
    accessible: Callable[[T, str], str] | None = None
    stretch: bool = False
    decoration: Callable[[T], QIcon | None] | None = None


class ItemsModel(QAbstractTableModel, Generic[T]):
    ItemRole = Qt.ItemDataRole.UserRole + 1  # the record itself

    def __init__(self, columns: Sequence[Column[T]], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.columns = list(columns)
        self._items: list[T] = []

    def set_items(self, items: Sequence[T]) -> None:
        self.beginResetModel()
        self._items = list(items)
        self.endResetModel()

    @property
    def items(self) -> list[T]:
        return list(self._items)

    def item(self, row: int) -> T | None:
        return self._items[row] if 0 <= row < len(self._items) else None

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._items)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.columns)

    def text(self, row: int, column: int) -> str:
        item = self.item(row)
        return "" if item is None else plain(self.columns[column].text(item))

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        item = self.item(index.row()) if index.isValid() else None
        if item is None:
            return None
        column = self.columns[index.column()]
        # every cell holds a server's text: shown through plain(), a tooltip never as markup
        if role == Qt.ItemDataRole.DisplayRole:
            return plain(column.text(item))
        if role == Qt.ItemDataRole.ToolTipRole and column.tip is not None:
            shown = column.tip(item)
            return None if shown is None else tip(shown)
        if role == Qt.ItemDataRole.DecorationRole and column.decoration is not None:
            return column.decoration(item)
        if role == Qt.ItemDataRole.ForegroundRole and column.brush is not None:
            return column.brush(item)
        if role == Qt.ItemDataRole.AccessibleTextRole and column.accessible is not None:
            return plain(column.accessible(item, column.text(item)))
        if role == self.ItemRole:
            return item
        return None

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if (
            orientation == Qt.Orientation.Horizontal
            and role == Qt.ItemDataRole.DisplayRole
            and 0 <= section < len(self.columns)
        ):
            return self.columns[section].header
        return None


def items_view(model: ItemsModel[Any], name: str, parent: QWidget | None = None) -> QTableView:
    """A read-only, single-row-selection table over ``model`` (every tab's list)."""
    view = QTableView(parent)
    view.setModel(model)
    view.setAccessibleName(name)
    view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    view.verticalHeader().hide()
    view.setWordWrap(False)
    view.setShowGrid(False)
    header = view.horizontalHeader()
    for i, column in enumerate(model.columns):
        mode = (
            QHeaderView.ResizeMode.Stretch
            if column.stretch
            else QHeaderView.ResizeMode.ResizeToContents
        )
        header.setSectionResizeMode(i, mode)
    if len(model.columns) == 1:
        view.horizontalHeader().hide()
    return view


def current_row(view: QTableView) -> int:
    index = view.currentIndex()
    return index.row() if index.isValid() else -1


def set_current_row(view: QTableView, row: int) -> None:
    model = view.model()
    if 0 <= row < model.rowCount():
        view.setCurrentIndex(model.index(row, 0))
        view.selectRow(row)
