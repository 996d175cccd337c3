"""Select text: the shown conversation as one read-only document.

The transcript gives every message its own widgets (fast to scroll, cards that act), so a
drag cannot cross from one message into the next. This view shows the same messages in
one QTextDocument: drag across messages, Ctrl+A, Ctrl+C copies plain text with a blank
line and the author between messages. Markdown is rendered as in the transcript; tool
calls are one line each. Links still go only to the system browser.

Opening it costs nothing until asked: the messages are rendered in slices of a few
milliseconds per event-loop turn (a long chat's Markdown takes seconds to render) and
appended message by message; a long chat shows the WINDOW messages around where the person
was (a document of 2,000 messages took seconds to fill and 1.5 s to copy).
"""

from __future__ import annotations

import html
import time
from collections.abc import Callable, Iterable, Iterator

from PySide6.QtCore import QMimeData, Qt, QTimer, Signal
from PySide6.QtGui import (
    QKeyEvent,
    QKeySequence,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
)
from PySide6.QtWidgets import QTextBrowser, QWidget

from portico.ui.chat.markdown import CodeBlock, parse_blocks
from portico.ui.chat.markdown_view import open_link
from portico.ui.chat.segments import Segment

SLICE_S = 0.008  # preparation work per event-loop turn
WINDOW = 200  # messages in the document at most (Ctrl+C on 2,000 took 1.5 s)
CACHE = 1000  # rendered messages kept (selecting again costs no Markdown rendering)


def segment_html(segment: Segment) -> str:
    if segment.kind != "text":
        return f"<p><i>{html.escape(segment.text)}</i></p>"
    parts = []
    for block in parse_blocks(segment.text):
        if isinstance(block, CodeBlock):
            parts.append(block.html.replace("<pre>", "<pre style='white-space:pre-wrap'>", 1))
        else:
            parts.append(block.html)
    return "".join(parts)


def message_html(index: int | None, who: str, segments: Iterable[Segment]) -> str:
    """``index`` None: the anchor is ``m?``, filled in when the piece is placed."""
    body = "".join(segment_html(s) for s in segments)
    name = "?" if index is None else index
    return f"<p><a name='m{name}'><b>{html.escape(who)}</b></a></p>{body}"


def plain_text(text: str) -> str:
    """The document's plain text for the clipboard: no non-breaking spaces, no trailing
    blanks, paragraphs on their own lines."""
    lines = text.replace("\u2029", "\n").replace("\u00a0", " ").split("\n")
    return "\n".join(line.rstrip() for line in lines).strip("\n")


Source = Callable[[], list[tuple[str, list[Segment]]]]


class ConversationText(QTextBrowser):
    """The read-only document of the Select text mode."""

    ready = Signal()  # the whole conversation is in the document
    closeRequested = Signal()  # Esc

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("conversation text")
        self.setReadOnly(True)
        self.setOpenLinks(False)
        self.setOpenExternalLinks(False)
        self.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
            | Qt.TextInteractionFlag.TextSelectableByKeyboard
            | Qt.TextInteractionFlag.LinksAccessibleByMouse
            | Qt.TextInteractionFlag.LinksAccessibleByKeyboard
        )
        self.anchorClicked.connect(lambda url: open_link(url.toString(), self))
        self._work: Iterator[tuple[int, str, list[Segment]]] | None = None
        self._cache: dict[tuple[str, tuple[Segment, ...]], str] = {}
        self._cursor = QTextCursor(self.document())
        self._first = True
        self._then: Callable[[], None] | None = None
        self.shown = range(0)
        self.total = 0
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self._step)
        self.loading = False

    def load(
        self,
        messages: list[tuple[str, list[Segment]]],
        around: int = 0,
        then: Callable[[], None] | None = None,
    ) -> range:
        """Show ``messages`` ((author, segments) each): all of them, or for a long chat
        the WINDOW messages around message ``around``. ``then`` runs once they are in.
        Returns the indexes shown."""
        self._timer.stop()
        self.clear()
        count = len(messages)
        start = max(0, min(around - WINDOW // 3, count - WINDOW))
        shown = range(start, min(count, start + WINDOW))
        self.shown = shown
        self.total = count
        self._then = then
        self._cursor = QTextCursor(self.document())
        self._first = True
        if len(shown) < count:
            note = (
                f"Messages {shown.start + 1:,}–{shown.stop:,} of {count:,} (where you were "
                "in the chat). Scroll the chat and select again for others; each message's "
                "Copy copies it whole."
            )
            self._cursor.insertHtml(f"<p><i>{html.escape(note)}</i></p>")
            self._first = False
        self._work = ((i, *messages[i]) for i in shown)
        self.loading = True
        self._step()
        return shown

    def _step(self) -> None:
        work = self._work
        if work is None:
            return
        deadline = time.perf_counter() + SLICE_S
        cursor = self._cursor
        for index, who, segments in work:
            key = (who, tuple(segments))
            piece = self._cache.get(key)
            if piece is None:
                piece = self._cache[key] = message_html(None, who, segments)
                if len(self._cache) > CACHE:
                    self._cache.pop(next(iter(self._cache)))
            piece = piece.replace("name='m?'", f"name='m{index}'", 1)
            cursor.movePosition(QTextCursor.MoveOperation.End)
            if not self._first:  # an empty line between messages
                cursor.insertBlock(QTextBlockFormat(), QTextCharFormat())
                cursor.insertBlock(QTextBlockFormat(), QTextCharFormat())
            cursor.insertHtml(piece)
            self._first = False
            if time.perf_counter() >= deadline:
                self._timer.start()
                return
        self._work = None
        self.loading = False
        then, self._then = self._then, None
        if then is not None:
            then()
        self.ready.emit()

    def go_to_message(self, index: int) -> None:
        """Scroll so message ``index`` is at the top."""
        self.scrollToAnchor(f"m{index}")

    def select_everything(self) -> None:
        self.selectAll()

    def selected_plain_text(self) -> str:
        return plain_text(self.textCursor().selection().toPlainText())

    def createMimeDataFromSelection(self) -> QMimeData:
        mime = QMimeData()
        mime.setText(self.selected_plain_text())
        return mime

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_Escape and not self.textCursor().hasSelection():
            self.closeRequested.emit()
            return
        if event.key() == Qt.Key.Key_Escape:
            cursor = self.textCursor()
            cursor.clearSelection()
            self.setTextCursor(cursor)
            return
        if event.matches(QKeySequence.StandardKey.Copy) and self.loading:
            return
        super().keyPressEvent(event)

    def move_to_start(self) -> None:
        self.moveCursor(QTextCursor.MoveOperation.Start)
