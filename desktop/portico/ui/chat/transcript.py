"""The transcript: a scrolling column of messages that stays fast for long chats.

Only the newest messages get widgets when a chat opens; older ones are built in small
batches as the person scrolls up (so opening 2,000 messages costs the same as opening
40). Streaming text is coalesced: deltas collect in a buffer and one timer per frame
renders them, so a fast model never repaints more than once a frame. The view follows
the bottom unless the person scrolled up; then "Jump to latest" appears.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QIcon, QKeyEvent, QResizeEvent
from PySide6.QtWidgets import QPushButton, QScrollArea, QVBoxLayout, QWidget

from portico.chat.messages import Message
from portico.ui.chat.markdown import parse_blocks
from portico.ui.chat.message_widget import MessageWidget
from portico.ui.chat.segments import Segment, author, message_segments
from portico.ui.shortcuts import Key, bind, handled_by_widget

JUMP = Key(("End", "Ctrl+End"), "Jump to the latest message", "Chats: the transcript")
SELECT_ALL = Key(("Ctrl+A",), "Select text: the whole chat selected", "Chats: the transcript")
handled_by_widget(SELECT_ALL)  # by TranscriptView.keyPressEvent

FIRST_WINDOW = 24  # messages built when a chat opens
BATCH = 1  # messages built per event-loop turn when scrolling (one widget is ~10-30 ms)
NEAR_TOP = 200  # px from the top that triggers the next batch
FRAME_MS = 16  # at most one render of streamed text per frame
FOLLOW_SLACK = 24  # px from the bottom that still counts as "at the bottom"
MAX_BUILT = 60  # messages with widgets at most (a relayout costs per built message)
LIVE_TAIL = 2  # the newest messages stay unfrozen (they change while a turn runs)


STYLE = """
QFrame#question { border-radius: 8px; background: rgba(127,127,127,0.10); }
QFrame#toolcard { border: 1px solid rgba(127,127,127,0.4); border-radius: 6px; }
QFrame#codeblock { border: 1px solid rgba(127,127,127,0.35); border-radius: 4px;
  background: rgba(127,127,127,0.08); }
QFrame#approval { border: 1px solid rgba(208,138,0,0.6); border-radius: 4px;
  background: rgba(208,138,0,0.10); }
"""


class TranscriptView(QScrollArea):
    editSubmitted = Signal(str, str)
    regenerateRequested = Signal(str)
    retryRequested = Signal()
    switchRequested = Signal(str)
    cancelCall = Signal(str)
    approvalAnswered = Signal(str, object)
    selectAllRequested = Signal()  # Ctrl+A anywhere in the transcript
    rebuilt = Signal()  # another chat or branch is shown (every widget is new)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("transcript")
        self.setWidgetResizable(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.inner = QWidget()
        self.inner.setObjectName("transcript")
        # One style sheet for every message, card and code block (one per widget costs
        # a style recomputation each and made long chats slow to open).
        self.inner.setStyleSheet(STYLE)
        self.column = QVBoxLayout(self.inner)
        self.column.setContentsMargins(12, 12, 12, 12)
        self.column.setSpacing(10)
        self.column.addStretch(1)
        self.setWidget(self.inner)
        self.icon_for: Callable[[str, str], QIcon | None] = lambda _server, _tool: None
        self.messages: list[Message] = []
        self.siblings: dict[str, list[str]] = {}
        self.widgets: dict[str, MessageWidget] = {}
        # Rows the core has not stored (the echo of a command, the line of a failure that
        # has no answer): kept on screen, left out when the core's copy is taken in.
        self.local: set[str] = set()
        # (message id, line): the first message still sent after /compact, and what was
        # left out before it; the line shows at the top of that message
        self.cut: tuple[str, str] | None = None
        self.first = 0  # index of the oldest message with a widget
        self.last = 0  # one past the newest message with a widget
        self.following = True
        self.running = False
        self._anchor: int | None = None  # the scroll value to restore once the range moved
        self._pending: dict[str, str] = {}  # message id -> full text to render
        self.renders = 0  # streamed-text renders (the benchmark reads it)
        self._frame = QTimer(self)
        self._frame.setSingleShot(True)
        self._frame.setInterval(FRAME_MS)
        self._frame.timeout.connect(self._flush)
        self._texts: dict[str, str] = {}
        # Children of the view: they die with it (a bare singleShot could fire after).
        self._bottom_timer = QTimer(self)
        self._bottom_timer.setSingleShot(True)
        self._bottom_timer.setInterval(0)
        self._bottom_timer.timeout.connect(self.scroll_to_bottom)
        self._earlier_timer = QTimer(self)
        self._earlier_timer.setSingleShot(True)
        self._earlier_timer.setInterval(0)
        self._earlier_timer.timeout.connect(self.load_earlier)
        self._later_timer = QTimer(self)
        self._later_timer.setSingleShot(True)
        self._later_timer.setInterval(0)
        self._later_timer.timeout.connect(self.load_later)
        # The range may not move (as much built as dropped): apply the anchor anyway.
        self._anchor_timer = QTimer(self)
        self._anchor_timer.setSingleShot(True)
        self._anchor_timer.setInterval(0)
        self._anchor_timer.timeout.connect(self._apply_anchor)
        # The next message to show while scrolling is built a turn ahead (hidden), so a
        # turn either builds one message or measures and places one, never both.
        self._ahead: tuple[str, MessageWidget] | None = None  # (message id, widget)
        # (the messages it was made for, answer id -> the model before it)
        self._switches: tuple[tuple[int, int, str], dict[str, str]] | None = None
        self._ahead_timer = QTimer(self)
        self._ahead_timer.setSingleShot(True)
        self._ahead_timer.setInterval(0)
        self._ahead_timer.timeout.connect(self._build_ahead)
        self._ahead_index: int | None = None
        self._ahead_parsed = False

        bar = self.verticalScrollBar()
        bar.valueChanged.connect(self._scrolled)
        bar.rangeChanged.connect(self._range_changed)
        self.jump_button = QPushButton("↓ Jump to latest", self)
        self.jump_button.setAccessibleName("Jump to latest")
        self.jump_button.setAutoDefault(False)
        self.jump_button.clicked.connect(self.jump_to_latest)
        self.jump_button.setToolTip("Jump to the latest message (End)")
        self.jump_button.hide()
        bind(self, JUMP, self.jump_to_latest, Qt.ShortcutContext.WidgetWithChildrenShortcut)

    # --- whole chats -------------------------------------------------------------------

    def set_messages(self, messages: list[Message], siblings: dict[str, list[str]]) -> None:
        self._drop_ahead()
        self._frame.stop()
        self._pending.clear()
        self._texts.clear()
        self._clear_from(1)  # every message and notice; 0 is the stretch above them
        self.widgets.clear()
        self.local.clear()
        self.messages = list(messages)
        self.siblings = dict(siblings)
        self.first = max(0, len(self.messages) - FIRST_WINDOW)
        self.last = len(self.messages)
        for message in self.messages[self.first :]:
            self.column.insertWidget(self.column.count(), self._build(message))
        self._mark_last()
        self._freeze(list(self.widgets.values())[:-LIVE_TAIL])
        self.following = True
        self.jump_button.hide()
        self._bottom_timer.start()
        self.rebuilt.emit()

    def reveal(self, index: int) -> MessageWidget | None:
        """Message ``index`` built and laid out (find goes to it): the built range moves
        around it when it is outside, as scrolling there would have built it."""
        if not 0 <= index < len(self.messages):
            return None
        message = self.messages[index]
        widget = self.widgets.get(message.id)
        if widget is None:
            self._drop_ahead()
            self._clear_from(1)
            self.widgets.clear()
            self.first = max(0, index - FIRST_WINDOW // 2)
            self.last = min(len(self.messages), self.first + FIRST_WINDOW)
            for built in self.messages[self.first : self.last]:
                self.column.insertWidget(self.column.count(), self._build(built))
            self._mark_last()
            self._freeze([w for w in self.widgets.values() if w.message_id not in self._live_ids()])
            self.following = False
            self.jump_button.show()
            self._place_jump()
            widget = self.widgets[message.id]
        self._bottom_timer.stop()
        self.following = self.following and index >= len(self.messages) - 1
        self.column.activate()
        self.inner.adjustSize()
        return widget

    def _build(self, message: Message) -> MessageWidget:
        ahead, self._ahead = self._ahead, None
        if ahead is not None and ahead[0] == message.id:
            widget = ahead[1]  # built hidden a turn ago: shown once the caller placed it
        else:
            if ahead is not None:
                ahead[1].deleteLater()
            widget = self._make(message)
        self.widgets[message.id] = widget
        return widget

    def _switched_from(self, message: Message) -> str | None:
        """The model of the answer before ``message`` when it is another one (the chat
        switched models there), else None."""
        if message.role != "assistant" or not message.model:
            return None
        key = (id(self.messages), len(self.messages), self.messages[-1].id if self.messages else "")
        if self._switches is None or self._switches[0] != key:
            switches: dict[str, str] = {}
            before: str | None = None
            for m in self.messages:
                if m.role == "assistant" and m.model:
                    if before is not None and m.model != before:
                        switches[m.id] = before
                    before = m.model
            self._switches = (key, switches)
        return self._switches[1].get(message.id)

    def _make(self, message: Message, parent: QWidget | None = None) -> MessageWidget:
        widget = MessageWidget(
            message,
            icon_for=self.icon_for,
            siblings=self.siblings.get(message.id),
            switched_from=self._switched_from(message),
            cut_note=self.cut[1] if self.cut and self.cut[0] == message.id else None,
            parent=parent,
        )
        widget.editSubmitted.connect(self.editSubmitted)
        widget.regenerateRequested.connect(self.regenerateRequested)
        widget.retryRequested.connect(self.retryRequested)
        widget.switchRequested.connect(self.switchRequested)
        widget.cancelCall.connect(self.cancelCall)
        widget.approvalAnswered.connect(self.approvalAnswered)
        return widget

    def _drop_ahead(self) -> None:
        self._ahead_timer.stop()
        self._ahead_index = None
        self._ahead_parsed = False
        ahead, self._ahead = self._ahead, None
        if ahead is not None:
            ahead[1].deleteLater()

    def _build_ahead(self) -> None:
        index = self._ahead_index
        if index is None or not 0 <= index < len(self.messages) or self._ahead is not None:
            self._ahead_index = None
            return
        message = self.messages[index]
        if message.id in self.widgets:
            self._ahead_index = None
            return
        if not self._ahead_parsed:
            # First turn: the Markdown (parse_blocks remembers it); next turn: the widgets.
            for segment in message_segments(message):
                if segment.kind == "text":
                    parse_blocks(segment.text)
            self._ahead_parsed = True
            self._ahead_timer.start()
            return
        self._ahead_index = None
        self._ahead_parsed = False
        # A hidden child of the column's widget: its style sheet applies when measured.
        widget = self._make(message, parent=self.inner)
        widget.hide()
        self._ahead = (message.id, widget)
        if message.id not in self._live_ids():
            widget.freeze(self._content_width())  # measured now, not when it is placed

    def _prepare(self, index: int) -> None:
        """Build message ``index`` on a later turn (the next one scrolling will need)."""
        if 0 <= index < len(self.messages) and self.messages[index].id not in self.widgets:
            self._ahead_index = index
            self._ahead_parsed = False
            self._ahead_timer.start()

    def load_earlier(self) -> int:
        """Build the next batch of older messages (and drop as many of the newest when
        more than MAX_BUILT are built, so a relayout stays cheap); returns how many."""
        if self.first == 0:
            return 0
        start = max(0, self.first - BATCH)
        bar = self.verticalScrollBar()
        built = []
        for offset, message in enumerate(self.messages[start : self.first]):
            widget = self._build(message)
            self.column.insertWidget(offset + 1, widget)
            widget.show()
            built.append(widget)
        self._freeze(built)
        spacing = self.column.spacing()
        self._anchor = bar.value() + sum(w.sizeHint().height() + spacing for w in built)
        count = self.first - start
        self.first = start
        self._drop_newest()
        self._anchor_timer.start()
        self._prepare(self.first - 1)
        return count

    def load_later(self) -> int:
        """Scrolled back down: build the next batch of newer messages (drop the oldest)."""
        if self.last >= len(self.messages):
            return 0
        end = min(len(self.messages), self.last + BATCH)
        anchor = self.widgets.get(self.messages[self.last - 1].id)
        at = self.column.indexOf(anchor) + 1 if anchor is not None else self.column.count()
        built = []
        for offset, message in enumerate(self.messages[self.last : end]):
            widget = self._build(message)
            self.column.insertWidget(at + offset, widget)
            widget.show()
            built.append(widget)
        self._freeze([w for w in built if w.message_id not in self._live_ids()])
        count = end - self.last
        self.last = end
        self._drop_oldest()
        self._mark_last()
        self._prepare(self.last)
        return count

    def _live_ids(self) -> set[str]:
        return {m.id for m in self.messages[-LIVE_TAIL:]}

    def _remove(self, message: Message) -> int:
        widget = self.widgets.pop(message.id, None)
        if widget is None:
            return 0
        height = widget.height() + self.column.spacing()
        self.column.removeWidget(widget)
        widget.hide()
        widget.deleteLater()
        return height

    def _drop_newest(self) -> None:
        while self.last - self.first > MAX_BUILT:
            if self.running and self.last >= len(self.messages) - LIVE_TAIL:
                return
            self.last -= 1
            self._remove(self.messages[self.last])

    def _drop_oldest(self) -> None:
        removed = 0
        while self.last - self.first > MAX_BUILT:
            removed += self._remove(self.messages[self.first])
            self.first += 1
        if removed:
            bar = self.verticalScrollBar()
            self._anchor = max(0, bar.value() - removed)
            self._anchor_timer.start()

    def show_newest(self) -> None:
        """Back to the end of the chat (its newest messages built)."""
        if self.last < len(self.messages):
            self.set_messages(self.messages, self.siblings)

    def _content_width(self) -> int:
        margins = self.column.contentsMargins()
        return max(200, self.viewport().width() - margins.left() - margins.right())

    def _freeze(self, widgets: list[MessageWidget]) -> None:
        width = self._content_width()
        for widget in widgets:
            widget.freeze(width)

    def _mark_last(self) -> None:
        last_user = next((m.id for m in reversed(self.messages) if m.role == "user"), None)
        last_answer = next((m.id for m in reversed(self.messages) if m.role == "assistant"), None)
        for message_id, widget in self.widgets.items():
            widget.set_last(message_id == last_user, message_id == last_answer, self.running)

    def set_running(self, running: bool) -> None:
        self.running = running
        self._mark_last()

    # --- live turn -------------------------------------------------------------------

    def add_message(self, message: Message, *, local: bool = False) -> MessageWidget:
        """``local``: a row the core does not store (see ``self.local``); a later rename
        to the core's id makes it an ordinary row."""
        self.show_newest()
        # The message that was live until now is finished: measure it once.
        ids = [m.id for m in self.messages[-LIVE_TAIL:]]
        older = self.widgets.get(ids[0]) if len(ids) == LIVE_TAIL else None
        if older is not None and not older.frozen and not self.running:
            older.freeze(self._content_width())
        self.messages.append(message)
        if local:
            self.local.add(message.id)
        self.last = len(self.messages)
        widget = self._build(message)
        self.column.insertWidget(self.column.count(), widget)
        widget.show()  # now, not on the layout's queued show (see MessageWidget.add_card)
        self._mark_last()
        return widget

    def add_widget(self, widget: QWidget) -> None:
        """A line that is not a message (a notice), at the end."""
        self.column.insertWidget(self.column.count(), widget)
        widget.show()

    def message_widget(self, message_id: str) -> MessageWidget | None:
        return self.widgets.get(message_id)

    def rename(self, old: str, new: str) -> None:
        """The core named a message the pane showed first under a temporary id."""
        widget = self.widgets.pop(old, None)
        self.local.discard(old)
        for message in self.messages:
            if message.id == old:
                message.id = new
        if widget is not None:
            widget.message_id = new
            self.widgets[new] = widget
        self._mark_last()

    def truncate_from(self, message_id: str) -> None:
        """Drop ``message_id`` and everything after it (an edit or a regenerate replaces
        them; the core keeps the old ones as a branch)."""
        self._drop_ahead()
        ids = [m.id for m in self.messages]
        if message_id not in ids:
            return
        index = ids.index(message_id)
        self.show_newest()
        ids = [m.id for m in self.messages]
        index = ids.index(message_id)
        doomed = self.messages[index:]
        self.messages = self.messages[:index]
        self.last = len(self.messages)
        for message in doomed:
            self.local.discard(message.id)
            widget = self.widgets.pop(message.id, None)
            if widget is not None:
                self.column.removeWidget(widget)
                widget.hide()
                widget.deleteLater()
        # Notices after the last message go too.
        last = self.widgets.get(self.messages[-1].id) if self.messages else None
        start = self.column.indexOf(last) + 1 if last is not None else 1  # 0: the stretch
        self._clear_from(start)
        self._mark_last()

    def _clear_from(self, start: int) -> None:
        while self.column.count() > start:
            item = self.column.takeAt(start)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.hide()
                widget.deleteLater()

    def set_cut(self, cut: tuple[str, str] | None) -> None:
        """Where /compact cut the chat, shown at that message (built or when built)."""
        old, self.cut = self.cut, cut
        if old is not None and old != cut and old[0] in self.widgets:
            self.widgets[old[0]].set_cut_note(None)
        if cut is not None and cut[0] in self.widgets:
            self.widgets[cut[0]].set_cut_note(cut[1])

    def stored_ids(self) -> list[str]:
        """The ids of the shown messages the core stores (local rows left out)."""
        return [m.id for m in self.messages if m.id not in self.local]

    def sync(self, messages: list[Message], siblings: dict[str, list[str]]) -> None:
        """The core's copy of the shown messages (the ids of :meth:`stored_ids`): taken in
        place, every widget kept; local rows stay where they are."""
        at_end = self.last >= len(self.messages)
        stored = iter(messages)
        merged = [m if m.id in self.local else next(stored, m) for m in self.messages]
        merged.extend(stored)
        self.messages = merged
        if at_end:
            self.last = len(merged)
        self.update_siblings(siblings)

    def update_siblings(self, siblings: dict[str, list[str]]) -> None:
        self._drop_ahead()
        self.siblings = dict(siblings)
        for message_id, widget in self.widgets.items():
            widget.set_siblings(self.siblings.get(message_id, [message_id]))
        self._mark_last()

    def append_text(self, message_id: str, delta: str) -> None:
        known = self._texts.get(message_id)
        if known is None:  # a new part: the core's "\n\n" before a round's text is its gap
            delta = delta.lstrip("\n")
        text = (known or "") + delta
        self._texts[message_id] = text
        self._pending[message_id] = text
        if not self._frame.isActive():
            self._frame.start()

    def break_text(self, message_id: str) -> None:
        """A tool call came between two pieces of text: the next delta starts a new part."""
        self.flush()
        self._texts.pop(message_id, None)
        widget = self.widgets.get(message_id)
        if widget is not None:
            widget.end_text()

    def flush(self) -> None:
        self._frame.stop()
        self._flush()

    def _flush(self) -> None:
        if not self._pending:
            return
        pending, self._pending = self._pending, {}
        self.renders += 1
        for message_id, text in pending.items():
            widget = self.widgets.get(message_id)
            if widget is not None:
                widget.stream_text(text)
        if not self.following:
            self.jump_button.show()
            self._place_jump()

    def finish_text(self, message_id: str) -> None:
        self.flush()
        self._texts.pop(message_id, None)
        widget = self.widgets.get(message_id)
        if widget is not None:
            widget.end_text()

    # --- Select text ------------------------------------------------------------------

    def text_source(self) -> list[tuple[str, list[Segment]]]:
        """Every shown message as (author, segments); built messages as they are on
        screen (a live answer's latest text), the others from their stored form."""
        out = []
        for message in self.messages:
            widget = self.widgets.get(message.id)
            segments = widget.segments() if widget is not None else message_segments(message)
            out.append((author(message), segments))
        return out

    def top_message(self) -> int:
        """Index of the first message visible at the top of the viewport."""
        top = self.verticalScrollBar().value()
        for index in range(self.first, self.last):
            widget = self.widgets.get(self.messages[index].id)
            if widget is not None and widget.geometry().bottom() >= top:
                return index
        return max(0, self.last - 1)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if SELECT_ALL.matches(event.keyCombination()):
            self.selectAllRequested.emit()
            return
        super().keyPressEvent(event)

    # --- scrolling ---------------------------------------------------------------------

    def _scrolled(self, value: int) -> None:
        bar = self.verticalScrollBar()
        if self._anchor is None:
            at_end = self.last >= len(self.messages)
            self.following = at_end and value >= bar.maximum() - FOLLOW_SLACK
            if self.following:
                self.jump_button.hide()
        if self._anchor is not None:
            return
        if value <= NEAR_TOP and self.first > 0:
            self._earlier_timer.start()
        elif value >= bar.maximum() - NEAR_TOP and self.last < len(self.messages):
            self._later_timer.start()

    def _range_changed(self, _minimum: int, maximum: int) -> None:
        bar = self.verticalScrollBar()
        if self._anchor is not None:
            bar.setValue(min(self._anchor, maximum))
            self._anchor = None
            self._keep_loading()
        elif self.following:
            bar.setValue(maximum)

    def _apply_anchor(self) -> None:
        if self._anchor is not None:
            bar = self.verticalScrollBar()
            bar.setValue(min(self._anchor, bar.maximum()))
            self._anchor = None
            self._keep_loading()

    def _keep_loading(self) -> None:
        """One message is built per event-loop turn: still near an end after the last one,
        build the next on the next turn (input and paints run in between)."""
        bar = self.verticalScrollBar()
        value = bar.value()
        if value <= NEAR_TOP and self.first > 0:
            self._earlier_timer.start()
        elif value >= bar.maximum() - NEAR_TOP and self.last < len(self.messages):
            self._later_timer.start()

    def scroll_to_bottom(self) -> None:
        bar = self.verticalScrollBar()
        bar.setValue(bar.maximum())

    def jump_to_latest(self) -> None:
        self.show_newest()
        self.following = True
        self.jump_button.hide()
        self.scroll_to_bottom()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._place_jump()
        if event.oldSize().width() != event.size().width():
            frozen = [w for w in self.widgets.values() if w.frozen]
            self._freeze(frozen)  # measured again at the new width

    def _place_jump(self) -> None:
        self.jump_button.adjustSize()
        viewport = self.viewport().geometry()
        self.jump_button.move(
            viewport.right() - self.jump_button.width() - 16,
            viewport.bottom() - self.jump_button.height() - 12,
        )
        self.jump_button.raise_()
