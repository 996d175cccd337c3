"""F1: the keyboard shortcuts of the window, read from where they are bound
(``ui/shortcuts.collect``), grouped by where each works."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QHBoxLayout,
    QHeaderView,
    QLineEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from portico.ui.shortcuts import Row


class ShortcutsDialog(QDialog):
    """A non-modal table (keys, what they do, where); the field filters it."""

    def __init__(self, rows: list[Row], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Keyboard Shortcuts")
        self.setAccessibleName("Keyboard shortcuts")
        self.setModal(False)
        self.rows = rows
        column = QVBoxLayout(self)
        self.filter = QLineEdit()
        self.filter.setPlaceholderText("Filter (a key or a word)")
        self.filter.setAccessibleName("filter shortcuts")
        self.filter.setClearButtonEnabled(True)
        self.filter.textChanged.connect(self._filter)
        column.addWidget(self.filter)
        self.table = QTableWidget(len(rows), 3)
        self.table.setAccessibleName("shortcuts")
        self.table.setHorizontalHeaderLabels(["Keys", "Does", "Where"])
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        for index, row in enumerate(rows):
            for col, text in enumerate((row.keys, row.what, row.where or "Everywhere")):
                self.table.setItem(index, col, QTableWidgetItem(text))
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        column.addWidget(self.table, 1)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        self.close_button = QPushButton("Close")
        self.close_button.setAutoDefault(False)
        self.close_button.clicked.connect(self.close)
        buttons.addWidget(self.close_button)
        column.addLayout(buttons)
        self.resize(640, 520)
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)

    def shown_rows(self) -> list[tuple[str, str, str]]:
        """The rows a person sees (the filter applied), as (keys, does, where)."""
        out = []
        for index in range(self.table.rowCount()):
            if self.table.isRowHidden(index):
                continue
            cells = [self.table.item(index, c) for c in range(3)]
            out.append(tuple(c.text() if c is not None else "" for c in cells))
        return out  # type: ignore[return-value]

    def _filter(self, text: str) -> None:
        needle = text.casefold().strip()
        for index, row in enumerate(self.rows):
            hay = f"{row.keys} {row.what} {row.where}".casefold()
            self.table.setRowHidden(index, bool(needle) and needle not in hay)
