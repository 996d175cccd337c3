"""One message of the transcript: the person's (text, attachments) or the assistant's
(text and tool cards in the order they happened), with Copy and Copy Markdown, Edit (any
question: the edit is a new version of it), Regenerate (any answer: a new version of it),
a branch switcher (‹ 2/3 ›), and Retry on a stopped or failed turn."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QMimeData, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QGuiApplication, QIcon
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from portico.chat.attachments import describe, is_image
from portico.chat.messages import Attachment, Message, text_beyond_rounds
from portico.text import visible
from portico.ui.chat.card_state import from_stored
from portico.ui.chat.markdown import to_plain
from portico.ui.chat.markdown_view import MarkdownView
from portico.ui.chat.segments import Segment, call_line
from portico.ui.chat.thinking import ThinkingView
from portico.ui.chat.thumbnails import ImageThumb
from portico.ui.chat.tool_card import CardState, ToolCard
from portico.ui.palette import set_tone
from portico.ui.text import set_plain

_LEFT = Qt.AlignmentFlag.AlignLeft
IconFor = Callable[[str, str], QIcon | None]  # (server, tool) -> the card's icon


def _button(text: str, name: str, tip: str = "") -> QPushButton:
    button = QPushButton(text)
    button.setFlat(True)
    button.setAutoDefault(False)
    button.setAccessibleName(name)
    if tip:
        button.setToolTip(tip)
    return button


class MessageWidget(QFrame):
    copyDone = Signal()
    editSubmitted = Signal(str, str)  # message id, new text
    regenerateRequested = Signal(str)
    retryRequested = Signal()
    compactRequested = Signal(str)  # "summarise" / "trim": the chat no longer fits
    switchRequested = Signal(str)  # the sibling message id to show
    cancelCall = Signal(str)  # call id
    approvalAnswered = Signal(str, object)  # call id, answer

    def __init__(
        self,
        message: Message,
        *,
        icon_for: IconFor | None = None,
        siblings: list[str] | None = None,
        switched_from: str | None = None,
        cut_note: str | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.message = message
        self.message_id = message.id
        self.role = message.role
        self.icon_for = icon_for or (lambda _server, _tool: None)
        self.cards: dict[str, ToolCard] = {}
        self._live_text: MarkdownView | None = None
        self._live_thinking: ThinkingView | None = None
        self._texts: list[str] = []  # the text of every part (for Copy)
        user = message.role == "user"
        self.setObjectName("question" if user else "answer")
        self.setAccessibleName("your message" if user else "answer")
        column = QVBoxLayout(self)
        column.setContentsMargins(10, 6, 10, 6)
        column.setSpacing(4)
        who = "You" if user else (message.model or "Assistant")
        self.who = QLabel(f"<b>{who}</b>")
        self.who.setAccessibleName("author")
        self.switch_mark: QLabel | None = None
        self.compact_buttons: tuple[QPushButton, QPushButton] | None = None
        if switched_from and not user:
            # the model changed mid-chat: this answer is the first of the new one
            self.switch_mark = QLabel(
                f"Model switched from {visible(switched_from)} to {visible(message.model or '')}"
            )
            self.switch_mark.setTextFormat(Qt.TextFormat.PlainText)
            self.switch_mark.setAccessibleName("model switch")
            set_tone(self.switch_mark, "muted")
            column.addWidget(self.switch_mark)
        self.cut_note: QLabel | None = None  # what /compact left out before this message
        self._column = column
        self.set_cut_note(cut_note)
        column.addWidget(self.who)
        self.parts = QVBoxLayout()
        self.parts.setSpacing(6)
        column.addLayout(self.parts)
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.status.setAccessibleName("message status")
        self.status.hide()
        column.addWidget(self.status)

        row = QHBoxLayout()
        row.setSpacing(2)
        self.copy_button = _button("Copy", "Copy message", "Copy the message as plain text")
        self.copy_button.clicked.connect(self.copy)
        row.addWidget(self.copy_button)
        self.copy_markdown_button = _button(
            "Copy Markdown", "Copy message as Markdown", "Copy the message's Markdown source"
        )
        self.copy_markdown_button.clicked.connect(self.copy_markdown)
        row.addWidget(self.copy_markdown_button)
        row.addStretch(1)
        self.tokens: QLabel | None = None  # an answer's tokens, once it has any
        column.addLayout(row)
        self._row = row
        self._actions: (
            tuple[QPushButton, QPushButton, QPushButton, QPushButton, QLabel, QPushButton] | None
        ) = None
        self.editor: QPlainTextEdit | None = None
        self._siblings: list[str] = []

        self._fill(message)
        if message.role == "assistant":
            self.set_tokens(message.input_tokens, message.output_tokens)
        self.set_siblings(siblings or [message.id])
        self.show_status(message.status, message.error)

    # --- actions -------------------------------------------------------------------
    # Edit, Regenerate, Retry and the branch switcher show on a few messages only (the
    # last ones, a failed one, one with versions): they are built the first time one is
    # needed, which keeps a message that scrolls into view cheap to build.

    def _built_actions(
        self,
    ) -> tuple[QPushButton, QPushButton, QPushButton, QPushButton, QLabel, QPushButton]:
        if self._actions is not None:
            return self._actions
        edit = _button("Edit", "Edit and resend", "Edit this message and send it again")
        edit.clicked.connect(self.start_edit)
        regenerate = _button(
            "Regenerate", "Regenerate answer", "A new answer to this question (a new version)"
        )
        regenerate.clicked.connect(lambda: self.regenerateRequested.emit(self.message_id))
        retry = _button("Retry", "Retry", "Run this turn again")
        retry.clicked.connect(self.retryRequested)
        prev_branch = _button("‹", "Previous version")
        prev_branch.clicked.connect(lambda: self._switch(0))
        label = QLabel()
        label.setAccessibleName("version")
        next_branch = _button("›", "Next version")
        next_branch.clicked.connect(lambda: self._switch(1))
        self._actions = (edit, regenerate, retry, prev_branch, label, next_branch)
        before: QWidget = self.copy_markdown_button
        for offset, widget in enumerate(self._actions):
            widget.hide()
            self._row.insertWidget(2 + offset, widget)
            if widget.focusPolicy() != Qt.FocusPolicy.NoFocus:
                QWidget.setTabOrder(before, widget)  # Tab goes along the row
                before = widget
        return self._actions

    def set_cut_note(self, text: str | None) -> None:
        """The line above this message saying what is left out of the requests before
        it (None: nothing is)."""
        if text is None:
            if self.cut_note is not None:
                self.cut_note.hide()
            return
        if self.cut_note is None:
            self.cut_note = QLabel()
            self.cut_note.setTextFormat(Qt.TextFormat.PlainText)
            self.cut_note.setWordWrap(True)
            self.cut_note.setAccessibleName("left out of what is sent")
            set_tone(self.cut_note, "warning")
            self._column.insertWidget(0, self.cut_note)
        self.thaw()
        self.cut_note.setText(f"— {text} —")
        self.cut_note.show()

    def offer_compact(self) -> tuple[QPushButton, QPushButton]:
        """The turn did not fit the model's context: the person chooses how to go on."""
        if self.compact_buttons is None:
            summarise = _button(
                "Summarise and retry",
                "Summarise and retry",
                "The model writes a summary that is sent instead of the older messages "
                "(they stay in the chat), then this turn runs again",
            )
            summarise.clicked.connect(lambda: self.compactRequested.emit("summarise"))
            trim = _button(
                "Trim and retry",
                "Trim and retry",
                "Leave the older messages out of what is sent (they stay in the chat), "
                "then this turn runs again",
            )
            trim.clicked.connect(lambda: self.compactRequested.emit("trim"))
            at = self._row.indexOf(self.retry_button) + 1
            self._row.insertWidget(at, summarise)
            self._row.insertWidget(at + 1, trim)
            self.compact_buttons = (summarise, trim)
        for button in self.compact_buttons:
            button.show()
        return self.compact_buttons

    @property
    def edit_button(self) -> QPushButton:
        return self._built_actions()[0]

    @property
    def regenerate_button(self) -> QPushButton:
        return self._built_actions()[1]

    @property
    def retry_button(self) -> QPushButton:
        return self._built_actions()[2]

    @property
    def prev_branch(self) -> QPushButton:
        return self._built_actions()[3]

    @property
    def branch_label(self) -> QLabel:
        return self._built_actions()[4]

    @property
    def next_branch(self) -> QPushButton:
        return self._built_actions()[5]

    def _show_action(self, index: int, shown: bool) -> None:
        if shown or self._actions is not None:
            self._built_actions()[index].setVisible(shown)

    # --- layout cost -------------------------------------------------------------------
    # Word-wrapped rich text answers heightForWidth by laying its text out again, and a
    # box layout asks every item on every relayout: with hundreds of messages, inserting
    # one costs seconds. A finished message measured once at the transcript's width
    # answers from that measure ("frozen") until its content or the width changes.

    _frozen: tuple[int, int] | None = None

    def freeze(self, width: int) -> None:
        if self._frozen is not None and self._frozen[0] == width:
            return  # measured at this width already (content changes thaw it)
        self._frozen = None
        height = super().heightForWidth(width)
        if height < 0:
            height = super().sizeHint().height()
        self._frozen = (width, height)
        self.updateGeometry()

    def thaw(self) -> None:
        if self._frozen is not None:
            self._frozen = None
            self.updateGeometry()

    @property
    def frozen(self) -> bool:
        return self._frozen is not None

    def hasHeightForWidth(self) -> bool:
        return self._frozen is None and super().hasHeightForWidth()

    def sizeHint(self) -> QSize:
        if self._frozen is not None:
            return QSize(self._frozen[0], self._frozen[1])
        return super().sizeHint()

    def minimumSizeHint(self) -> QSize:
        if self._frozen is not None:
            return QSize(0, self._frozen[1])
        return super().minimumSizeHint()

    # --- content ---------------------------------------------------------------------

    def _fill(self, message: Message) -> None:
        if message.role == "user":
            self.add_text(message.text)
            for attachment in message.attachments:
                self._add_attachment(attachment)
            return
        calls = {call.id: call for call in message.tool_calls}
        if message.rounds:
            for part in message.rounds:
                if part.thinking:
                    self.parts.addWidget(ThinkingView(part.thinking))
                if part.text:
                    self.add_text(part.text)
                for call_id in part.tool_call_ids:
                    if call_id in calls:
                        self.add_card(from_stored(calls.pop(call_id)))
            beyond = text_beyond_rounds(message)  # e.g. an answer cut while it streamed
            if beyond:
                self.add_text(beyond)
        elif message.text:
            self.add_text(message.text)
        for call in calls.values():
            self.add_card(from_stored(call))

    def _add_attachment(self, attachment: Attachment) -> None:
        """Its name, type and size (and the server of a resource); an image also as a
        picture that opens full size."""
        line = attachment.name
        kind = describe(attachment)
        if attachment.kind == "resource" and attachment.server:
            kind = ", ".join(x for x in (kind, f"from {attachment.server}") if x)
        if kind:
            line += f" ({kind})"
        label = QLabel()
        set_plain(label, f"{'🔗' if attachment.kind == 'resource' else '📎'} {line}")
        label.setProperty("line", line)
        label.setToolTip(str(attachment.path or attachment.uri or attachment.name))
        label.setAccessibleName(f"attachment {attachment.name}")
        self.parts.addWidget(label)
        if attachment.path is not None and is_image(attachment):  # decoded in a worker
            self.parts.addWidget(ImageThumb(Path(attachment.path), attachment.name), 0, _LEFT)

    def add_text(self, text: str) -> MarkdownView:
        view = MarkdownView(text)
        self.parts.addWidget(view)
        self._texts.append(text)
        self._live_text = None
        return view

    def stream_thinking(self, delta: str) -> None:
        """More of what the model thinks before this round's answer (shown collapsed)."""
        self.thaw()
        if self._live_thinking is None:
            self.end_text()
            self._live_thinking = ThinkingView()
            self.parts.addWidget(self._live_thinking)
            self._live_thinking.show()
        self._live_thinking.append(delta)

    def stream_text(self, text: str) -> None:
        self.thaw()
        """Show ``text`` as the current (growing) text part of a live answer."""
        self._live_thinking = None  # the answer began: the next thinking is a new round's
        if self._live_text is None:
            self._live_text = MarkdownView()
            self.parts.addWidget(self._live_text)
            self._live_text.show()  # as add_card's
            self._texts.append("")
        self._live_text.stream(text)
        self._texts[-1] = text

    def end_text(self) -> None:
        if self._live_text is not None:
            self._live_text.finish()
        self._live_text = None

    def add_card(self, state: CardState) -> ToolCard:
        self.thaw()
        self.end_text()
        self._live_thinking = None
        card = ToolCard(state, self.icon_for(state.server, state.tool))
        card.cancelRequested.connect(self.cancelCall)
        card.approvalAnswered.connect(self.approvalAnswered)
        card.resized.connect(self.thaw)
        self.parts.addWidget(card)
        # A layout shows a widget added to a visible parent only on a queued call, and the
        # approval that can follow in the same batch of events must find its buttons
        # shown: hidden, Tab skips them and a scroll to the card measures nothing.
        card.show()
        self.cards[state.id] = card
        return card

    def segments(self) -> list[Segment]:
        """What it shows, in order (for Select text): text parts and tool-call lines."""
        out: list[Segment] = []
        for i in range(self.parts.count()):
            item = self.parts.itemAt(i)
            widget = item.widget() if item is not None else None
            if isinstance(widget, MarkdownView) and widget.text:
                out.append(Segment("text", widget.text))
            elif isinstance(widget, ToolCard):
                out.append(Segment("call", call_line(widget.state)))
            elif isinstance(widget, QLabel) and widget.accessibleName().startswith("attachment"):
                out.append(Segment("note", f"Attached: {widget.property('line')}"))
        return out

    # --- find in chat -----------------------------------------------------------------

    def searchable_text(self) -> str:
        """What find looks through, in the order shown: text parts and tool results."""
        parts = []
        for widget in self._parts():
            if isinstance(widget, MarkdownView):
                parts.append(widget.text)
            elif isinstance(widget, ToolCard):
                parts.append(widget.state.text)
        return "\n".join(p for p in parts if p)

    def _parts(self) -> list[QWidget]:
        items = (self.parts.itemAt(i) for i in range(self.parts.count()))
        return [w for item in items if item is not None and (w := item.widget()) is not None]

    _find_targets: tuple[tuple[int, int, QWidget], ...] = ()  # (first, end, widget) marked

    def mark(self, query: str, current: int | None) -> bool:
        """Find's marks on every occurrence of ``query`` (none: ``""``), occurrence
        ``current`` as the current one; True if any was marked."""
        start = 0
        targets: list[tuple[int, int, QWidget]] = []
        for widget in self._parts():
            if isinstance(widget, MarkdownView):
                for found, block in widget.mark(query, current, start):
                    targets.append((start, start + found, block))
                    start += found
            elif isinstance(widget, ToolCard):
                found = widget.mark(query, current, start)
                holder = widget.result_text or widget
                targets.append((start, start + found, holder))
                start += found
        self._find_targets = tuple(targets) if query else ()
        return start > 0

    def find_target(self, occurrence: int) -> QWidget | None:
        """The widget that shows occurrence ``occurrence`` of the marked query."""
        for first, end, widget in self._find_targets:
            if first <= occurrence < end:
                return widget
        return None

    def plain_text(self) -> str:
        """The message's Markdown source (every text part)."""
        return "\n\n".join(t for t in self._texts if t)

    def copy(self) -> None:
        """Plain text on the clipboard (what a reader sees), its Markdown beside it for
        applications that take text/markdown."""
        mime = QMimeData()
        mime.setText("\n\n".join(to_plain(t) for t in self._texts if t))
        mime.setData("text/markdown", self.plain_text().encode("utf-8"))
        QGuiApplication.clipboard().setMimeData(mime)
        self.copy_button.setText("Copied")
        self.copyDone.emit()

    def copy_markdown(self) -> None:
        QGuiApplication.clipboard().setText(self.plain_text())
        self.copy_markdown_button.setText("Copied")
        self.copyDone.emit()

    # --- state -----------------------------------------------------------------------

    def show_status(self, status: str, error: str | None = None) -> None:
        self.thaw()
        if status == "stopped":
            self.status.setText("Stopped. The answer above is what arrived before you stopped it.")
            set_tone(self.status, "muted")
        elif status == "failed":
            self.status.setText(f"This answer failed: {error or 'unknown error'}")
            set_tone(self.status, "error")
        elif status == "streaming":
            self.status.setText("Interrupted (the app closed while this answer was written).")
            set_tone(self.status, "muted")
        else:
            self.status.setText("")
        self.status.setVisible(bool(self.status.text()))
        self._show_action(2, status in ("stopped", "failed", "streaming"))

    def set_tokens(self, input_tokens: int, output_tokens: int, cost: str | None = None) -> None:
        """The answer's tokens (every request of its turn), at the end of its row."""
        if not (input_tokens or output_tokens):
            return
        if self.tokens is None:
            self.tokens = QLabel()
            self.tokens.setAccessibleName("tokens of this answer")
            set_tone(self.tokens, "muted")
            self._row.addWidget(self.tokens)
        spent = f" · {cost}" if cost else ""
        self.tokens.setText(f"{input_tokens:,} in · {output_tokens:,} out{spent}")

    _retry_at = 0.0  # monotonic time Retry waits for (a 429's retry-after)
    _retry_timer: QTimer | None = None

    def offer_retry(self, after: float | None = None) -> None:
        """Show Retry; after a rate limit it counts down the provider's retry-after
        (disabled, "Retry in 12 s") before it can be clicked."""
        button = self.retry_button
        button.show()
        self._retry_at = time.monotonic() + after if after else 0.0
        if self._retry_timer is None:
            self._retry_timer = QTimer(self)
            self._retry_timer.setInterval(250)
            self._retry_timer.timeout.connect(self._tick_retry)
        self._tick_retry()
        if self._retry_at:
            self._retry_timer.start()

    def _tick_retry(self) -> None:
        left = math.ceil(self._retry_at - time.monotonic()) if self._retry_at else 0
        button = self.retry_button
        if left > 0:
            button.setText(f"Retry in {left} s")
            button.setEnabled(False)
            return
        button.setText("Retry")
        button.setEnabled(True)
        if self._retry_timer is not None:
            self._retry_timer.stop()

    def set_last(self, last_user: bool, last_answer: bool, running: bool) -> None:
        self._show_action(0, self.role == "user" and not running)  # any question
        # Any answer: a new version of it (a branch; the later messages stay on the old one).
        self._show_action(1, self.role == "assistant" and not running)
        if running:
            self._show_action(2, False)

    def set_siblings(self, siblings: list[str]) -> None:
        self._siblings = siblings
        many = len(siblings) > 1
        for index in (3, 4, 5):
            self._show_action(index, many)
        if not many:
            return
        at = siblings.index(self.message_id) if self.message_id in siblings else 0
        self.branch_label.setText(f"{at + 1}/{len(siblings)}")
        self.branch_label.setAccessibleName(f"version {at + 1} of {len(siblings)}")
        self.prev_branch.setEnabled(at > 0)
        self.next_branch.setEnabled(at < len(siblings) - 1)
        self._branch_targets = (
            siblings[at - 1] if at > 0 else None,
            siblings[at + 1] if at < len(siblings) - 1 else None,
        )

    _branch_targets: tuple[str | None, str | None] = (None, None)

    def _switch(self, which: int) -> None:
        target = self._branch_targets[which]
        if target is not None:
            self.switchRequested.emit(target)

    # --- edit ------------------------------------------------------------------------

    def start_edit(self) -> None:
        self.thaw()
        if self.editor is not None:
            self.editor.setFocus()
            return
        editor = QPlainTextEdit(self.message.text)
        editor.setAccessibleName("edit message")
        editor.setTabChangesFocus(True)
        editor.setMaximumHeight(140)
        send = _button("Send", "Send edited message")
        send.setFlat(False)
        cancel = _button("Cancel", "Cancel editing")
        box = QWidget()
        column = QVBoxLayout(box)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(editor)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(cancel)
        row.addWidget(send)
        column.addLayout(row)
        self.parts.addWidget(box)
        box.show()  # as add_card's: Tab from the editor finds Cancel and Send at once
        self.editor = editor
        self.edit_box = box
        self.edit_send = send

        def finish(submit: bool) -> None:
            text = editor.toPlainText().strip()
            box.hide()
            box.deleteLater()
            self.editor = None
            if submit and text:
                self.editSubmitted.emit(self.message_id, text)

        send.clicked.connect(lambda: finish(True))
        cancel.clicked.connect(lambda: finish(False))
        editor.setFocus()
