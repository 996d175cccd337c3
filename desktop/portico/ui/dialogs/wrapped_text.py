"""Read-only text that is shown whole: wrapped at the widget's width (inside a long word
too, such as a URL or a ``${env:…}`` value) and as tall as its text, so nothing is cut,
elided or scrolled out of view. A QLabel wraps only at spaces, and a scrolling view hides
the end of a long line: a confirmation must show every line of what it confirms."""

from __future__ import annotations

from PySide6.QtCore import QSizeF, Qt
from PySide6.QtGui import QFontDatabase, QTextOption
from PySide6.QtWidgets import QFrame, QSizePolicy, QTextEdit, QWidget

from portico.text import visible


class WrappedText(QTextEdit):
    def __init__(self, text: str, *, mono: bool = True, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self.setAcceptRichText(False)
        if mono:
            self.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.setLineWrapMode(QTextEdit.LineWrapMode.WidgetWidth)
        self.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        # Text from a link or a server: controls, bidi overrides and invisible characters
        # are shown as escapes, never obeyed (portico.text.visible).
        self.setPlainText(visible(text, multiline=True))
        # The view lays its text out at its own width; follow each new layout's height.
        self.document().documentLayout().documentSizeChanged.connect(self._fit)
        self._fit(self.document().size())

    def _fit(self, size: QSizeF) -> None:
        """As tall as the wrapped text at the current width: nothing left to scroll."""
        height = int(size.height() + 0.999) + 2 * self.frameWidth()
        if height != self.height():
            self.setFixedHeight(height)

    def fully_shown(self) -> bool:
        """True when every line is in view: no part scrolled away in either direction."""
        return self.horizontalScrollBar().maximum() == 0 and self.verticalScrollBar().maximum() == 0
