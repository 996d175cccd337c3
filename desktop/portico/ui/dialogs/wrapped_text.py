"""Read-only text that is shown whole: wrapped at the widget's width (inside a long word
too, such as a URL or a ``${env:…}`` value) and as tall as its text, so nothing is cut,
elided or scrolled out of view. A QLabel wraps only at spaces, and a scrolling view hides
the end of a long line: a confirmation must show every line of what it confirms."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase, QResizeEvent, QTextOption
from PySide6.QtWidgets import QFrame, QSizePolicy, QTextEdit, QWidget


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
        self.setPlainText(text)
        self.document().contentsChanged.connect(self.fit)
        self.fit()

    def fit(self) -> None:
        """Make the widget exactly as tall as its wrapped text at the current width."""
        document = self.document()
        document.setTextWidth(max(1, self.viewport().width()))
        height = int(document.size().height() + 0.999) + 2 * self.frameWidth()
        if height != self.height():
            self.setFixedHeight(height)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if event.oldSize().width() != event.size().width():
            self.fit()

    def fully_shown(self) -> bool:
        """True when every line is in view: no part scrolled away in either direction."""
        return self.horizontalScrollBar().maximum() == 0 and self.verticalScrollBar().maximum() == 0
