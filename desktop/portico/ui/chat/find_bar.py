"""Find in chat (Ctrl+F): a bar above the transcript that searches the shown branch's
messages and tool results, counts the matches, goes to the next or previous one (Enter /
Shift+Enter, F3 / Shift+F3, its arrows) and highlights them; Esc closes it.

Matches are counted in the stored text (every message, built or not: a long chat's
older messages have no widgets), one list of (message index, occurrence in that message).
Going to one builds that message if needed and marks its occurrences in what is shown.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QLineEdit, QToolButton, QWidget

from portico.chat.messages import Message, text_beyond_rounds
from portico.ui.chat.marks import count
from portico.ui.chat.transcript import TranscriptView
from portico.ui.palette import set_tone
from portico.ui.shortcuts import Key, bind, handled_by_widget

FIND = Key(("Ctrl+F",), "Find in this chat", "Everywhere")
NEXT = Key(("Enter",), "Next match", "Chats: find in chat")
PREVIOUS = Key(("Shift+Enter",), "Previous match", "Chats: find in chat")
CLOSE = Key(("Esc",), "Close the find bar", "Chats: find in chat")
NEXT_F3 = Key(("F3",), "Next match", "Chats: find in chat")
PREVIOUS_F3 = Key(("Shift+F3",), "Previous match", "Chats: find in chat")
handled_by_widget(NEXT, PREVIOUS, CLOSE)  # by FindBar.eventFilter (the F3s are shortcuts)


def searchable(message: Message) -> str:
    """What a search looks through in a stored message, in the order the transcript shows
    it (``MessageWidget.searchable_text`` for a built one): text parts, tool results."""
    if message.role == "user":
        return message.text
    calls = {call.id: call for call in message.tool_calls}
    parts: list[str] = []
    if message.rounds:
        for part in message.rounds:
            parts.append(part.text)
            parts += [calls.pop(i).result_text for i in part.tool_call_ids if i in calls]
        parts.append(text_beyond_rounds(message))
    else:
        parts.append(message.text)
    parts += [call.result_text for call in calls.values()]
    return "\n".join(p for p in parts if p)


@dataclass(frozen=True)
class Match:
    message: int  # index in the transcript's messages
    occurrence: int  # which one in that message


class FindBar(QFrame):
    """The bar: the query, "3 of 12", previous / next, close."""

    queryChanged = Signal(str)
    nextRequested = Signal()
    previousRequested = Signal()
    closeRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("findbar")
        self.setAccessibleName("find in chat")
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(4)
        self.field = QLineEdit()
        self.field.setPlaceholderText("Find in this chat")
        self.field.setAccessibleName("find in chat text")
        self.field.setClearButtonEnabled(True)
        self.field.textChanged.connect(self.queryChanged)
        self.field.installEventFilter(self)
        row.addWidget(self.field, 1)
        self.count = QLabel()
        self.count.setAccessibleName("matches")
        set_tone(self.count, "muted")
        row.addWidget(self.count)
        self.previous_button = self._tool("↑", "Previous match", "Previous match (Shift+Enter)")
        self.previous_button.clicked.connect(self.previousRequested)
        self.next_button = self._tool("↓", "Next match", "Next match (Enter)")
        self.next_button.clicked.connect(self.nextRequested)
        self.close_button = self._tool("✕", "Close find", "Close (Esc)")
        self.close_button.clicked.connect(self.closeRequested)
        for button in (self.previous_button, self.next_button, self.close_button):
            row.addWidget(button)

    def _tool(self, text: str, name: str, tip: str) -> QToolButton:
        button = QToolButton()
        button.setText(text)
        button.setAccessibleName(name)
        button.setToolTip(tip)
        button.setAutoRaise(True)
        return button

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.field and event.type() == QEvent.Type.KeyPress:
            assert isinstance(event, QKeyEvent)
            pressed = event.keyCombination()
            for key, signal in (
                (PREVIOUS, self.previousRequested),
                (NEXT, self.nextRequested),
                (CLOSE, self.closeRequested),
            ):
                if key.matches(pressed):
                    signal.emit()
                    return True
        return super().eventFilter(watched, event)


class TranscriptFind(QObject):
    """Find over a transcript: the matches, the current one, the marks on screen."""

    def __init__(self, transcript: TranscriptView, bar: FindBar) -> None:
        super().__init__(bar)
        self.transcript = transcript
        self.bar = bar
        self.matches: list[Match] = []
        self.current = -1
        self.query = ""
        self._marked: set[str] = set()  # ids of the messages whose widgets carry marks
        # Typing runs one search per pause, not one per key in a long chat.
        self._search_timer = QTimer(self)
        self._search_timer.setSingleShot(True)
        self._search_timer.setInterval(120)
        self._search_timer.timeout.connect(self.search)
        bar.queryChanged.connect(lambda _q: self._search_timer.start())
        bar.nextRequested.connect(lambda: self.step(1))
        bar.previousRequested.connect(lambda: self.step(-1))
        bar.closeRequested.connect(self.close)
        bar.hide()
        parent = bar.parentWidget() or bar
        for key, step in ((NEXT_F3, 1), (PREVIOUS_F3, -1)):
            bind(
                parent,
                key,
                partial(self._f3, step),
                Qt.ShortcutContext.WidgetWithChildrenShortcut,
            )
        transcript.rebuilt.connect(self._rebuilt)

    def _f3(self, step: int) -> None:
        if self.bar.isVisible():
            self.step(step)

    def open(self) -> None:
        self.bar.show()
        self.bar.field.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.bar.field.selectAll()
        if self.bar.field.text():
            self.search()

    def close(self) -> None:
        self._search_timer.stop()
        self._unmark()
        self.matches, self.current, self.query = [], -1, ""
        self.bar.hide()
        self.transcript.setFocus(Qt.FocusReason.OtherFocusReason)

    def search(self) -> None:
        """Count every match of the bar's text; go to the first one from the bottom up
        (the newest, where the person reads)."""
        self._search_timer.stop()
        self._unmark()
        query = self.bar.field.text()
        self.query = query
        self.matches = []
        if query:
            for index, message in enumerate(self.transcript.messages):
                widget = self.transcript.widgets.get(message.id)
                hay = widget.searchable_text() if widget is not None else searchable(message)
                n = count(hay, query)
                self.matches += [Match(index, k) for k in range(n)]
        self.current = len(self.matches) - 1 if self.matches else -1
        self._show()

    def step(self, by: int) -> None:
        if self._search_timer.isActive() or self.query != self.bar.field.text():
            self.search()
            if by < 0 or not self.matches:
                return
        if not self.matches:
            return
        self.current = (self.current + by) % len(self.matches)
        self._show()

    def _show(self) -> None:
        bar = self.bar
        if not self.query:
            bar.count.setText("")
        elif not self.matches:
            bar.count.setText("No matches")
        else:
            bar.count.setText(f"{self.current + 1} of {len(self.matches)}")
        set_tone(bar.count, "warning" if self.query and not self.matches else "muted")
        bar.previous_button.setEnabled(bool(self.matches))
        bar.next_button.setEnabled(bool(self.matches))
        if not self.matches:
            return
        match = self.matches[self.current]
        widget = self.transcript.reveal(match.message)
        if widget is None:
            return
        self._mark_built(match)
        target = widget.find_target(match.occurrence) or widget
        self.transcript.ensureWidgetVisible(target, 0, 40)

    def _mark_built(self, current: Match) -> None:
        self._unmark()
        for index, message in enumerate(self.transcript.messages):
            widget = self.transcript.widgets.get(message.id)
            if widget is None:
                continue
            which = current.occurrence if index == current.message else None
            if widget.mark(self.query, which):
                self._marked.add(message.id)

    def _unmark(self) -> None:
        for message_id in self._marked:
            widget = self.transcript.widgets.get(message_id)
            if widget is not None:
                widget.mark("", None)
        self._marked.clear()

    def _rebuilt(self) -> None:
        """Another chat or branch is shown: its matches, if the bar is open."""
        self._marked.clear()
        if self.bar.isVisible() and self.bar.field.text():
            self._search_timer.start()
