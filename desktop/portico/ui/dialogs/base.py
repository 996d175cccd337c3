"""What every Prompter dialog shares: the server header, the queue line, answer-once."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont, QFontDatabase, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from portico.ui.text import plain
from portico.ui.text import rich as _rich


class PromptDialog(QDialog):
    """A non-modal question. Emits ``answered`` exactly once, or never when aborted.

    Closing the window (or Esc) answers ``decline_value()``. ``abort()`` closes it without
    an answer (the core withdrew the question).
    """

    answered = Signal(object)

    def __init__(self, server: str, title: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.server = server
        self._done = False
        self.setModal(False)
        self.setWindowModality(Qt.WindowModality.NonModal)
        self.setWindowTitle(f"{title} — {server}")
        self.setMinimumWidth(480)
        self.setAccessibleName(f"{title} for {server}")
        self.layout_ = QVBoxLayout(self)
        self.header = QLabel(f"<b>{_esc(server)}</b> · {_esc(title)}")
        self.header.setTextFormat(Qt.TextFormat.RichText)
        self.header.setAccessibleName("server")
        self.layout_.addWidget(self.header)
        self.queue_label = QLabel()
        self.queue_label.setAccessibleName("questions waiting")
        self.queue_label.hide()
        self.buttons_row = QHBoxLayout()
        self.buttons_row.addStretch(1)

    def finish_layout(self) -> None:
        """Subclasses call this after adding their body: queue line and buttons go last."""
        self.layout_.addWidget(self.queue_label)
        self.layout_.addLayout(self.buttons_row)

    def add_button(self, text: str, value: Any, *, name: str | None = None) -> QPushButton:
        button = action_button(text, lambda: self.answer(value), name=name)
        self.buttons_row.addWidget(button)
        return button

    def add_key(self, key: str, button: QPushButton) -> QShortcut:
        shortcut = QShortcut(QKeySequence(key), self)

        def press() -> None:
            if button.isEnabled():
                button.click()

        shortcut.activated.connect(press)
        return shortcut

    # --- answering --------------------------------------------------------------------

    def decline_value(self) -> Any:
        raise NotImplementedError

    @property
    def is_answered(self) -> bool:
        return self._done

    def answer(self, value: Any) -> None:
        if self._done:
            return
        self._done = True
        self.answered.emit(value)
        super().done(QDialog.DialogCode.Accepted)

    def done(self, result: int) -> None:  # Esc, window close, reject()
        if not self._done:
            self._done = True
            self.answered.emit(self.decline_value())
        super().done(result)

    def abort(self) -> None:
        """Close without answering: the question was withdrawn."""
        self._done = True
        super().done(QDialog.DialogCode.Rejected)

    def set_waiting(self, count: int) -> None:
        if count > 0:
            more = "question" if count == 1 else "questions"
            self.queue_label.setText(f"{count} more {more} waiting after this one.")
            self.queue_label.show()
        else:
            self.queue_label.hide()


def action_button(text: str, slot: Any, *, name: str | None = None) -> QPushButton:
    """A button Enter never presses (no auto-default), named for screen readers."""
    button = QPushButton(text)
    button.setAutoDefault(False)
    button.setDefault(False)
    button.setAccessibleName(name or text.replace("&", ""))
    button.clicked.connect(slot)
    return button


def monospace_view(text: str, *, read_only: bool = True) -> QPlainTextEdit:
    view = QPlainTextEdit()
    view.setPlainText(plain(text, multiline=True))
    view.setReadOnly(read_only)
    view.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
    view.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
    return view


def selectable_label(text: str, *, mono: bool = False, rich: bool = False) -> QLabel:
    """A wrapping, selectable label. Plain text is shown through ``plain`` (lines kept);
    ``rich`` markup is the caller's own HTML, every foreign piece in it through ``esc``."""
    label = QLabel(text if rich else plain(text, multiline=True))
    label.setTextFormat(Qt.TextFormat.RichText if rich else Qt.TextFormat.PlainText)
    label.setWordWrap(True)
    label.setTextInteractionFlags(
        Qt.TextInteractionFlag.TextSelectableByMouse
        | Qt.TextInteractionFlag.TextSelectableByKeyboard
    )
    if mono:
        label.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
    return label


def large_font(base: QFont, factor: float = 2.0) -> QFont:
    font = QFont(base)
    font.setPointSizeF(max(base.pointSizeF(), 9.0) * factor)
    font.setBold(True)
    return font


def _esc(text: str) -> str:
    return _rich(text, multiline=False)


esc = _esc
