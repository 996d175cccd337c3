"""The notice area at the top of the main window: non-modal messages with one action."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from portico.prompts import Notice
from portico.ui.palette import tone

_TINTS = {
    "info": "rgba(47,111,176,0.10)",
    "warning": "rgba(208,138,0,0.14)",
    "error": "rgba(176,0,32,0.10)",
}


class NoticeRow(QFrame):
    dismissed = Signal()

    def __init__(
        self,
        notice: Notice,
        action: tuple[str, Callable[[], None]] | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.notice = notice
        self.setObjectName("notice")
        accent = tone(notice.level, role=QPalette.ColorRole.Window)
        self.setStyleSheet(
            f"QFrame#notice {{ border: 1px solid {accent};"
            f" border-left: 5px solid {accent}; border-radius: 3px;"
            f" background: {_TINTS[notice.level]}; }}"
        )
        row = QHBoxLayout(self)
        row.setContentsMargins(8, 4, 4, 4)
        self.label = QLabel(notice.text)
        self.label.setWordWrap(True)
        self.label.setAccessibleName(f"{notice.level} notice")
        row.addWidget(self.label, 1)
        self.action_button: QPushButton | None = None
        if action is not None:
            text, callback = action
            self.action_button = QPushButton(text)
            self.action_button.clicked.connect(callback)
            self.action_button.clicked.connect(self.dismiss)
            row.addWidget(self.action_button)
        close = QPushButton("Dismiss")
        close.setAccessibleName("Dismiss notice")
        close.clicked.connect(self.dismiss)
        row.addWidget(close)

    def dismiss(self) -> None:
        self.hide()
        self.dismissed.emit()
        self.deleteLater()


class NoticeArea(QWidget):
    """Newest first; one row per (server, text) so a repeated notice is not stacked."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._rows: dict[tuple[str | None, str], NoticeRow] = {}
        self.setAccessibleName("notices")
        self.hide()

    def post(
        self, notice: Notice, action: tuple[str, Callable[[], None]] | None = None
    ) -> NoticeRow:
        key = (notice.server, notice.text)
        old = self._rows.pop(key, None)
        if old is not None:
            old.dismiss()
        row = NoticeRow(notice, action, self)
        row.dismissed.connect(lambda: self._forget(key, row))
        self._rows[key] = row
        self._layout.insertWidget(0, row)
        self.show()
        return row

    def rows(self) -> list[NoticeRow]:
        return list(self._rows.values())

    def _forget(self, key: tuple[str | None, str], row: NoticeRow) -> None:
        if self._rows.get(key) is row:
            del self._rows[key]
        if not self._rows:
            self.hide()
