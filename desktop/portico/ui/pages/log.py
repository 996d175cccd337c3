"""The Log tab: a level filter for the server's log notifications, and search with next /
previous that highlights every match in the live log view (the Servers place keeps feeding
the same QPlainTextEdit from its LogBook)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import (
    QColor,
    QKeySequence,
    QShortcut,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
)
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from portico.ui.shortcuts import WHERE

if TYPE_CHECKING:
    from portico.ui.pages.log_lines import LogBook

MAX_HIGHLIGHTS = 1000
LEVEL_CHOICES = (
    ("All levels", ""),
    ("Info and above", "info"),
    ("Warnings and above", "warning"),
    ("Errors and above", "error"),
)


class LogPage(QWidget):
    def __init__(
        self,
        view: QPlainTextEdit,
        book: LogBook | None = None,
        server: Callable[[], str | None] = lambda: None,
        parent: QWidget | None = None,
        on_level: Callable[[str], None] | None = None,
    ) -> None:
        """Call after the view left its old place (it is reparented into this page).
        ``on_level(level)``: the person chose a level ("" is every level); the server
        shown is asked for it too."""
        super().__init__(parent)
        self.view = view
        self.book = book
        self._server = server
        self._on_level = on_level
        self.level = QComboBox()
        self.level.setAccessibleName("log level filter")
        self.level.setToolTip(
            "Which of the server's log messages to show and ask the server for"
            " (stderr always shows)"
        )
        for text, value in LEVEL_CHOICES:
            self.level.addItem(text, value)
        self.level.currentIndexChanged.connect(lambda _i: self._level_changed())
        self.setAccessibleName("log")
        self.search = QLineEdit()
        self.search.setPlaceholderText("Search the log (Enter: next, Shift+Enter: previous)")
        self.search.setAccessibleName("search the log")
        self.search.setClearButtonEnabled(True)
        self.search.textChanged.connect(self._changed)
        self.search.returnPressed.connect(self.find_next)
        self.prev_button = QPushButton("&Previous")
        self.prev_button.setAccessibleName("Previous match")
        self.prev_button.clicked.connect(self.find_previous)
        self.next_button = QPushButton("&Next")
        self.next_button.setAccessibleName("Next match")
        self.next_button.clicked.connect(self.find_next)
        self.count_label = QLabel()
        self.count_label.setAccessibleName("matches")
        row = QHBoxLayout()
        level_label = QLabel("Lev&el:")
        level_label.setBuddy(self.level)
        row.addWidget(level_label)
        row.addWidget(self.level)
        find_label = QLabel("&Find:")
        find_label.setBuddy(self.search)
        row.addWidget(find_label)
        row.addWidget(self.search, 1)
        row.addWidget(self.prev_button)
        row.addWidget(self.next_button)
        row.addWidget(self.count_label)
        column = QVBoxLayout(self)
        column.setContentsMargins(4, 4, 4, 4)
        column.addLayout(row)
        column.addWidget(view, 1)
        view.show()
        shift_enter = QShortcut(QKeySequence("Shift+Return"), self.search)
        shift_enter.setContext(Qt.ShortcutContext.WidgetShortcut)
        shift_enter.activated.connect(self.find_previous)
        shift_enter.setWhatsThis("Previous match")
        shift_enter.setProperty(WHERE, "Servers: Log search")
        find = QShortcut(QKeySequence(QKeySequence.StandardKey.Find), self)
        find.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        find.activated.connect(self.focus_search)
        find.setWhatsThis("Search the log")
        find.setProperty(WHERE, "Servers: Log")
        view.textChanged.connect(self._refresh_highlights)
        self.matches = 0

    def _level_changed(self) -> None:
        level = str(self.level.currentData() or "")
        if self._on_level is not None:
            self._on_level(level)
        if self.book is None:
            return
        self.book.min_level = level
        self.book.show(self.view, self._server())

    def set_level(self, level: str) -> None:
        index = self.level.findData(level)
        if index < 0:
            raise KeyError(f"no level filter {level!r}")
        self.level.setCurrentIndex(index)

    def focus_search(self) -> None:
        self.search.setFocus()
        self.search.selectAll()

    def _changed(self) -> None:
        self._refresh_highlights()
        cursor = self.view.textCursor()
        cursor.setPosition(cursor.selectionStart())
        self.view.setTextCursor(cursor)
        if self.search.text():
            self.find_next()

    def _refresh_highlights(self) -> None:
        term = self.search.text()
        selections: list[QTextEdit.ExtraSelection] = []
        count = 0
        if term:
            fmt = QTextCharFormat()
            fmt.setBackground(QColor(255, 214, 0, 140))
            doc = self.view.document()
            cursor = doc.find(term, 0)
            while not cursor.isNull():
                count += 1
                if len(selections) < MAX_HIGHLIGHTS:
                    extra = QTextEdit.ExtraSelection()
                    extra.cursor = cursor
                    extra.format = fmt
                    selections.append(extra)
                cursor = doc.find(term, cursor)
        self.view.setExtraSelections(selections)
        self.matches = count
        self.count_label.setText(("1 match" if count == 1 else f"{count} matches") if term else "")

    def find_next(self) -> bool:
        return self._find(backward=False)

    def find_previous(self) -> bool:
        return self._find(backward=True)

    def _find(self, *, backward: bool) -> bool:
        term = self.search.text()
        if not term:
            return False
        flags = QTextDocument.FindFlag.FindBackward if backward else QTextDocument.FindFlag(0)
        if self.view.find(term, flags):
            return True
        # wrap around
        cursor = self.view.textCursor()
        cursor.movePosition(
            QTextCursor.MoveOperation.End if backward else QTextCursor.MoveOperation.Start
        )
        self.view.setTextCursor(cursor)
        return self.view.find(term, flags)

    def selected_line(self) -> str:
        return self.view.textCursor().block().text()
