"""The notice area at the top of the main window: non-modal messages with one action."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QFrame, QHBoxLayout, QPushButton, QVBoxLayout, QWidget

from portico.prompts import Notice
from portico.ui.palette import tone
from portico.ui.text import plain_label

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
        self.label = plain_label(notice.text, multiline=True)
        self.label.setAccessibleName(f"{notice.level} notice")
        row.addWidget(self.label, 1)
        self.action_button: QPushButton | None = None
        self._callback: Callable[[], None] | None = None
        if action is not None:
            text, self._callback = action
            self.action_button = QPushButton(text)
            self.action_button.clicked.connect(self._act)
            self.action_button.clicked.connect(self.dismiss)
            row.addWidget(self.action_button)
        close = QPushButton("Dismiss")
        close.setAccessibleName("Dismiss notice")
        close.clicked.connect(self.dismiss)
        row.addWidget(close)

    def shows(self, notice: Notice, action: tuple[str, Callable[[], None]] | None) -> bool:
        """True when this row already says ``notice`` with an action of the same label."""
        label = self.action_button.text() if self.action_button is not None else None
        return self.notice == notice and label == (action[0] if action else None)

    def rebind(self, action: tuple[str, Callable[[], None]] | None) -> None:
        self._callback = action[1] if action else None

    def _act(self) -> None:
        if self._callback is not None:
            self._callback()

    def dismiss(self) -> None:
        self.hide()
        self.dismissed.emit()
        self.deleteLater()


def notice_key(notice: Notice) -> tuple[str | None, str]:
    """One row per (server, kind); a notice without a kind is keyed by its text alone, so
    the same sentence from two places (with and without a server) shows once."""
    if notice.kind:
        return (notice.server, notice.kind)
    return (None, notice.text)


class NoticeArea(QWidget):
    """Newest first; one row per key (:func:`notice_key`): a newer notice of the same
    kind replaces the older one, and :meth:`resolve` removes them when the state is over."""

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
        key = notice_key(notice)
        same = self._rows.get(key)
        if same is not None and same.shows(notice, action):
            # a state update that says the same again keeps the row (no flicker, focus kept)
            same.rebind(action)
            return same
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

    def resolve(self, server: str | None, kind: str | None = None) -> int:
        """Remove the notices about ``server`` (of ``kind``, or all of them); returns how
        many went."""
        gone = [
            row
            for row in self._rows.values()
            if row.notice.server == server
            and (kind is None or row.notice.kind == kind)
            and (server is not None or kind is not None)
        ]
        for row in gone:
            row.dismiss()
        return len(gone)

    def _forget(self, key: tuple[str | None, str], row: NoticeRow) -> None:
        if self._rows.get(key) is row:
            del self._rows[key]
        if not self._rows:
            self.hide()
