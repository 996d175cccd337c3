"""What Keep mine would write over the file on disk, as a diff a person can read: tall
enough for a hunk and its context, removed and added lines coloured, opened at the first
change (a message box's details showed six lines, the change below them)."""

from __future__ import annotations

from PySide6.QtGui import (
    QShowEvent,
    QSyntaxHighlighter,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
)
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from portico.text import visible
from portico.ui.dialogs.base import monospace_view
from portico.ui.palette import Tone, tone_color

SHOWN_LINES = 24  # lines the view shows without scrolling (at most: fewer for a short diff)
SHOWN_COLUMNS = 90


def _kind(line: str) -> Tone | None:
    if line.startswith(("+++", "---")):
        return "muted"
    if line.startswith("@@"):
        return "info"
    if line.startswith("+"):
        return "ok"
    if line.startswith("-"):
        return "error"
    return None


def first_change(diff: str) -> int | None:
    """The line number (from 0) of the diff's first removed or added line."""
    for number, line in enumerate(diff.splitlines()):
        if _kind(line) in ("ok", "error"):
            return number
    return None


class _DiffColours(QSyntaxHighlighter):
    def __init__(self, document: QTextDocument) -> None:
        super().__init__(document)
        self._formats: dict[Tone, QTextCharFormat] = {}
        for tone in ("muted", "info", "ok", "error"):
            fmt = QTextCharFormat()
            fmt.setForeground(tone_color(tone))
            self._formats[tone] = fmt

    def highlightBlock(self, text: str) -> None:
        kind = _kind(text)
        if kind is not None:
            self.setFormat(0, len(text), self._formats[kind])


class DiffDialog(QDialog):
    """Non-modal: ``overwrite_button`` accepts, ``cancel_button`` rejects."""

    def __init__(self, parent: QWidget | None, diff: str) -> None:
        super().__init__(parent)
        self.setWindowTitle("Keep your version?")
        self.diff = diff
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("Your version replaces what is on disk now. The difference:"))
        self.view: QPlainTextEdit = monospace_view(visible(diff, multiline=True))
        self.view.setAccessibleName("difference between the file on disk and your version")
        self._colours = _DiffColours(self.view.document())
        lines = max(6, min(SHOWN_LINES, len(diff.splitlines()) + 1))
        metrics = self.view.fontMetrics()
        frame = 2 * self.view.frameWidth() + 2 * int(self.view.document().documentMargin())
        self.view.setMinimumHeight(metrics.lineSpacing() * lines + frame)
        self.view.setMinimumWidth(metrics.horizontalAdvance("0") * SHOWN_COLUMNS + frame)
        layout.addWidget(self.view)
        buttons = QDialogButtonBox()
        self.overwrite_button: QPushButton = buttons.addButton(
            "&Overwrite", QDialogButtonBox.ButtonRole.DestructiveRole
        )
        self.cancel_button: QPushButton = buttons.addButton(
            "Cancel", QDialogButtonBox.ButtonRole.RejectRole
        )
        self.cancel_button.setDefault(True)
        self.overwrite_button.clicked.connect(self.accept)
        self.cancel_button.clicked.connect(self.reject)
        layout.addWidget(buttons)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.show_first_change()

    def show_first_change(self) -> None:
        """Scroll so the first changed line is in view (with the context above it)."""
        number = first_change(self.diff)
        if number is None:
            return
        block = self.view.document().findBlockByNumber(number)
        cursor = QTextCursor(block)
        self.view.setTextCursor(cursor)
        self.view.ensureCursorVisible()
