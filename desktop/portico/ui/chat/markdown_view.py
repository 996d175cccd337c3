"""A message's Markdown as Qt widgets: prose labels and code blocks with a Copy button.

Links open in the system browser (QDesktopServices), never inside the app. Text is
selectable by mouse and keyboard; links are reachable with Tab.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt, QUrl, Signal
from PySide6.QtGui import QDesktopServices, QFontDatabase, QGuiApplication, QKeyEvent, QKeySequence
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from portico.ui.chat.markdown import Block, CodeBlock, ProseBlock, StreamSplitter, parse_blocks
from portico.ui.chat.marks import mark_html

SAFE_SCHEMES = ("http", "https", "mailto")

TEXT_FLAGS = (
    Qt.TextInteractionFlag.TextSelectableByMouse
    | Qt.TextInteractionFlag.TextSelectableByKeyboard
    | Qt.TextInteractionFlag.LinksAccessibleByMouse
    | Qt.TextInteractionFlag.LinksAccessibleByKeyboard
)


def open_link(link: str, parent: QWidget | None = None) -> bool:
    """Open ``link`` in the system browser; other schemes (file:, javascript:) are refused.

    A web address that could mislead (a look-alike name, ``user@host``, an IP address,
    plain http: any ``review_url`` warning) is shown first and opens only when the person
    says so (``OpenLinkDialog``); False then, as nothing opened yet."""
    url = QUrl(link)
    scheme = url.scheme().lower()
    if scheme not in SAFE_SCHEMES:
        return False
    if scheme in ("http", "https"):
        from portico.policy.url_review import review_url

        if review_url(link).warnings:
            from portico.ui.dialogs.open_link_dialog import ask_before_opening

            window = parent.window() if parent is not None else None
            ask_before_opening(link, lambda u: QDesktopServices.openUrl(QUrl(u)), window)
            return False
    return QDesktopServices.openUrl(url)


class MeasuredLabel(QLabel):
    """A word-wrapped label that remembers its height per width until its text changes.

    QLabel answers heightForWidth by laying its document out again, and a layout asks every
    label on every relayout: while an answer streams, its growing tail relayouts the whole
    message each frame, and with dozens of finished paragraphs above it that cost hundreds
    of milliseconds per frame on the GUI thread.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._heights: dict[int, int] = {}

    def setText(self, text: str) -> None:
        self._heights.clear()
        super().setText(text)

    def heightForWidth(self, width: int) -> int:
        height = self._heights.get(width)
        if height is None:
            if len(self._heights) > 8:  # a resize drag walks through many widths
                self._heights.clear()
            height = self._heights[width] = super().heightForWidth(width)
        return height

    def changeEvent(self, event: QEvent) -> None:
        if event.type() in (QEvent.Type.FontChange, QEvent.Type.StyleChange):
            self._heights.clear()
        super().changeEvent(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        # Ctrl+A means the whole conversation, not this paragraph: the key goes on to
        # the transcript, which opens Select text with everything selected.
        if event.matches(QKeySequence.StandardKey.SelectAll):
            event.ignore()
            return
        super().keyPressEvent(event)


class RichLabel(MeasuredLabel):
    """Selectable rich text whose links go to the system browser."""

    linkOpened = Signal(str)

    def __init__(self, html: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setTextFormat(Qt.TextFormat.RichText)
        self.setWordWrap(True)
        self.setOpenExternalLinks(False)
        self.setTextInteractionFlags(TEXT_FLAGS)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.linkActivated.connect(self._activated)
        self.setText(html)

    _unmarked: str | None = None  # the text before find's marks went in

    def setText(self, text: str) -> None:
        self._unmarked = None
        super().setText(text)

    def mark(self, query: str, current: int | None, start: int) -> int:
        """Find's marks (none for an empty ``query``); how many occurrences it holds."""
        if self._unmarked is None:
            if not query:
                return 0
            self._unmarked = self.text()
        original = self._unmarked
        marked, found = mark_html(original, query, current, start) if query else (original, 0)
        MeasuredLabel.setText(self, marked if found else original)
        self._unmarked = original if found else None
        return found

    def _activated(self, link: str) -> None:
        if open_link(link, self):
            self.linkOpened.emit(link)


class CodeBlockWidget(QFrame):
    """Highlighted code with its language and a Copy button (copies the plain source)."""

    def __init__(self, block: CodeBlock, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.block = block
        self.setObjectName("codeblock")
        column = QVBoxLayout(self)
        column.setContentsMargins(8, 4, 8, 6)
        column.setSpacing(2)
        header = QHBoxLayout()
        self.language = QLabel(block.language or "code")
        self.language.setEnabled(False)
        header.addWidget(self.language)
        header.addStretch(1)
        self.copy_button = QPushButton("Copy")
        self.copy_button.setAutoDefault(False)
        self.copy_button.setFlat(True)
        self.copy_button.setAccessibleName(f"Copy {block.language or 'code'} block")
        self.copy_button.clicked.connect(self.copy)
        header.addWidget(self.copy_button)
        column.addLayout(header)
        self.code = MeasuredLabel()
        self.code.setTextFormat(Qt.TextFormat.RichText)
        self.code.setWordWrap(True)
        self.code.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
            | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        self.code.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.code.setAccessibleName("code")
        column.addWidget(self.code)
        self.set_block(block)

    def set_block(self, block: CodeBlock) -> None:
        self.block = block
        self.language.setText(block.language or "code")
        self.code.setText(self._html())

    def _html(self) -> str:
        return self.block.html.replace("<pre>", "<pre style='white-space:pre-wrap'>", 1)

    def mark(self, query: str, current: int | None, start: int) -> int:
        """Find's marks in the code (none for an empty ``query``)."""
        marked, found = mark_html(self._html(), query, current, start) if query else ("", 0)
        self.code.setText(marked if found else self._html())
        return found

    def copy(self) -> None:
        QGuiApplication.clipboard().setText(self.block.code)
        self.copy_button.setText("Copied")


def block_widget(block: Block) -> QWidget:
    if isinstance(block, CodeBlock):
        return CodeBlockWidget(block)
    label = RichLabel(block.html)
    label.setAccessibleName("message text")
    return label


def _update_widget(widget: QWidget, block: Block) -> bool:
    """Reuse ``widget`` for ``block`` when it is of the same kind."""
    if isinstance(block, CodeBlock) and isinstance(widget, CodeBlockWidget):
        if widget.block != block:
            widget.set_block(block)
        return True
    if isinstance(block, ProseBlock) and isinstance(widget, RichLabel):
        if widget.property("source") != block.source:
            widget.setText(block.html)
            widget.setProperty("source", block.source)
        return True
    return False


class MarkdownView(QWidget):
    """A column of block widgets. ``set_text`` renders a finished text; ``stream`` renders
    a growing one, re-rendering only what changed since the last call."""

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.column = QVBoxLayout(self)
        self.column.setContentsMargins(0, 0, 0, 0)
        self.column.setSpacing(6)
        self.text = ""
        self._frozen = 0  # widgets that no longer change
        self._splitter: StreamSplitter | None = None
        if text:
            self.set_text(text)

    def widgets(self) -> list[QWidget]:
        items = (self.column.itemAt(i) for i in range(self.column.count()))
        return [w for item in items if item is not None and (w := item.widget()) is not None]

    def mark(self, query: str, current: int | None, start: int) -> list[tuple[int, QWidget]]:
        """Find's marks in every block; (occurrences, block widget) for each block."""
        out: list[tuple[int, QWidget]] = []
        for widget in self.widgets():
            if isinstance(widget, RichLabel | CodeBlockWidget):
                found = widget.mark(query, current, start)
                start += found
                out.append((found, widget))
        return out

    def set_text(self, text: str) -> None:
        self._splitter = None
        self.text = text
        self._frozen = 0
        self._show(parse_blocks(text), start=0)

    def stream(self, text: str) -> None:
        if self._splitter is None:
            self._splitter = StreamSplitter()
            self._clear_from(0)
            self._frozen = 0
        self.text = text
        newly, tail = self._splitter.update(text)
        self._show(newly + tail, start=self._frozen)
        self._frozen += len(newly)

    def finish(self) -> None:
        """The stream ended: the tail becomes ordinary blocks."""
        self._splitter = None

    def _show(self, blocks: list[Block], start: int) -> None:
        existing = self.widgets()
        for offset, block in enumerate(blocks):
            index = start + offset
            if index < len(existing) and _update_widget(existing[index], block):
                continue
            if index < len(existing):
                old = existing[index]
                self.column.removeWidget(old)
                old.deleteLater()
            widget = block_widget(block)
            if isinstance(block, ProseBlock):
                widget.setProperty("source", block.source)
            self.column.insertWidget(index, widget)
            existing = self.widgets()
        self._clear_from(start + len(blocks))

    def _clear_from(self, index: int) -> None:
        while self.column.count() > index:
            item = self.column.takeAt(index)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.deleteLater()
