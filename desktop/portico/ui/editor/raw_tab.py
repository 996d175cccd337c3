"""The raw text of one config file: highlighting, a line-number gutter, live markers.

Typing restarts a short timer; when it fires, ``textSettled`` carries the text to the
window, which re-parses it (``parse_text``) and hands the diagnostics back through
``set_diagnostics``: the offending lines get a wavy underline, a dot in the gutter and the
CLI's message as tooltip.
"""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import QEvent, QRect, QSize, Qt, QTimer, Signal
from PySide6.QtGui import (
    QColor,
    QFontDatabase,
    QHelpEvent,
    QPainter,
    QPaintEvent,
    QResizeEvent,
    QTextCharFormat,
    QTextCursor,
    QTextFormat,
)
from PySide6.QtWidgets import QPlainTextEdit, QTextEdit, QToolTip, QWidget

from portico.config.model import Diagnostic, Dialect
from portico.ui.editor.highlighter import ConfigHighlighter

DEBOUNCE_MS = 300
ERROR_COLOR = QColor("#d32f2f")
WARNING_COLOR = QColor("#f9a825")


class _Gutter(QWidget):
    def __init__(self, editor: RawTab) -> None:
        super().__init__(editor)
        self.editor = editor

    def sizeHint(self) -> QSize:
        return QSize(self.editor.gutter_width(), 0)

    def paintEvent(self, event: QPaintEvent) -> None:
        self.editor.paint_gutter(self, event)


class RawTab(QPlainTextEdit):
    """One file's text. ``markers`` maps line number (1-based) to the messages on it."""

    textSettled = Signal(str)

    def __init__(self, text: str, dialect: Dialect, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.setTabChangesFocus(False)
        self.highlighter = ConfigHighlighter(self.document(), dialect)
        self.markers: dict[int, list[str]] = {}
        self._severity: dict[int, str] = {}
        self._programmatic = False
        self.gutter = _Gutter(self)
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.setInterval(DEBOUNCE_MS)
        self.timer.timeout.connect(self.flush)
        self.blockCountChanged.connect(lambda _n: self._fit_gutter())
        self.updateRequest.connect(self._scroll_gutter)
        self.textChanged.connect(self._typed)
        self.setPlainText(text)
        self.timer.stop()
        self._fit_gutter()

    # --- text --------------------------------------------------------------------------

    def set_text(self, text: str) -> None:
        """Replace the text without triggering re-validation (the window already did).

        Only the changed stretch is replaced: a form edit changes a line or two, and
        replacing (and re-highlighting) the whole of a 400-server file takes 70-110 ms."""
        old = self.toPlainText()
        if text == old:
            return
        start = _common_prefix(old, text)
        end = _common_suffix(old, text, start)
        cursor = self.textCursor().position()
        scroll = self.verticalScrollBar().value()
        self._programmatic = True
        try:
            edit = QTextCursor(self.document())
            edit.setPosition(_utf16(old[:start]))  # Qt counts UTF-16 units, not code points
            edit.setPosition(_utf16(old[: len(old) - end]), QTextCursor.MoveMode.KeepAnchor)
            edit.insertText(text[start : len(text) - end])
            self.document().clearUndoRedoStacks()  # as setPlainText: the file's, not typing
        finally:
            self._programmatic = False
        moved = self.textCursor()
        moved.setPosition(min(cursor, len(text)))
        self.setTextCursor(moved)
        self.verticalScrollBar().setValue(scroll)

    def _typed(self) -> None:
        if not self._programmatic:
            self.timer.start()

    def flush(self) -> None:
        """Emit the pending edit now (the timer calls this; tests may too)."""
        self.timer.stop()
        self.textSettled.emit(self.toPlainText())

    # --- markers -----------------------------------------------------------------------

    def set_diagnostics(self, diagnostics: Iterable[Diagnostic]) -> None:
        self.markers = {}
        self._severity = {}
        for diag in diagnostics:
            line = diag.line or 1
            self.markers.setdefault(line, []).append(str(diag))
            if diag.is_error or self._severity.get(line) != "error":
                self._severity[line] = diag.severity
        selections = []
        for line, severity in sorted(self._severity.items()):
            block = self.document().findBlockByNumber(line - 1)
            if not block.isValid():
                continue
            selection = QTextEdit.ExtraSelection()
            fmt = QTextCharFormat()
            fmt.setUnderlineStyle(QTextCharFormat.UnderlineStyle.WaveUnderline)
            color = ERROR_COLOR if severity == "error" else WARNING_COLOR
            fmt.setUnderlineColor(color)
            background = QColor(color)
            background.setAlpha(28)
            fmt.setBackground(background)
            fmt.setProperty(QTextFormat.Property.FullWidthSelection, True)
            fmt.setToolTip("\n".join(self.markers[line]))
            selection.format = fmt
            cursor = QTextCursor(block)
            end = QTextCursor.MoveOperation.EndOfBlock
            cursor.movePosition(end, QTextCursor.MoveMode.KeepAnchor)
            selection.cursor = cursor
            selections.append(selection)
        self.setExtraSelections(selections)
        self.gutter.update()

    def message_at_line(self, line: int) -> str | None:
        messages = self.markers.get(line)
        return "\n".join(messages) if messages else None

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            pos = self.viewport().mapFromGlobal(event.globalPos())
            line = self.cursorForPosition(pos).blockNumber() + 1
            text = self.message_at_line(line)
            if text:
                QToolTip.showText(event.globalPos(), text, self)
            else:
                QToolTip.hideText()
            return True
        return super().event(event)

    # --- gutter ------------------------------------------------------------------------

    def gutter_width(self) -> int:
        digits = len(str(max(1, self.blockCount())))
        return 18 + self.fontMetrics().horizontalAdvance("9") * max(digits, 2)

    def _fit_gutter(self) -> None:
        self.setViewportMargins(self.gutter_width(), 0, 0, 0)

    def _scroll_gutter(self, rect: QRect, dy: int) -> None:
        if dy:
            self.gutter.scroll(0, dy)
        else:
            self.gutter.update(0, rect.y(), self.gutter.width(), rect.height())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        area = self.contentsRect()
        self.gutter.setGeometry(QRect(area.left(), area.top(), self.gutter_width(), area.height()))

    def paint_gutter(self, gutter: QWidget, event: QPaintEvent) -> None:
        painter = QPainter(gutter)
        palette = self.palette()
        painter.fillRect(event.rect(), palette.alternateBase())
        block = self.firstVisibleBlock()
        number = block.blockNumber()
        top = round(self.blockBoundingGeometry(block).translated(self.contentOffset()).top())
        height = self.fontMetrics().height()
        while block.isValid() and top <= event.rect().bottom():
            bottom = top + round(self.blockBoundingRect(block).height())
            if block.isVisible() and bottom >= event.rect().top():
                line = number + 1
                severity = self._severity.get(line)
                if severity is not None:
                    painter.setPen(Qt.PenStyle.NoPen)
                    painter.setBrush(ERROR_COLOR if severity == "error" else WARNING_COLOR)
                    size = max(6, height // 2)
                    painter.drawEllipse(4, top + (height - size) // 2, size, size)
                painter.setPen(palette.placeholderText().color())
                painter.drawText(
                    0,
                    top,
                    gutter.width() - 4,
                    height,
                    Qt.AlignmentFlag.AlignRight,
                    str(line),
                )
            block = block.next()
            top = bottom
            number += 1
        painter.end()


def _common_prefix(a: str, b: str) -> int:
    """The length of the longest common prefix of ``a`` and ``b``."""
    n = min(len(a), len(b))
    low, high = 0, n
    while low < high:  # binary search on slices: C-speed compares, not a Python loop
        mid = (low + high + 1) // 2
        if a[:mid] == b[:mid]:
            low = mid
        else:
            high = mid - 1
    return low


def _common_suffix(a: str, b: str, prefix: int) -> int:
    """The length of the longest common suffix not overlapping ``prefix``."""
    n = min(len(a), len(b)) - prefix
    low, high = 0, n
    while low < high:
        mid = (low + high + 1) // 2
        if a[len(a) - mid :] == b[len(b) - mid :]:
            low = mid
        else:
            high = mid - 1
    return low


def _utf16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2
