"""A tool call in the transcript: server and tool, arguments (collapsed JSON), status with
progress and elapsed time, Cancel while it runs, an inline approval, and the result
(text, images that enlarge on click, resource links) or the error in plain words.

Denials and refusals read as what the person (or nobody) decided, never as a failure of
the server.
"""

from __future__ import annotations

import html
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QFontDatabase, QIcon
from PySide6.QtWidgets import (
    QCheckBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from portico.chat.events import CANCELLED_BY_PERSON
from portico.prompts import (
    ApprovalAnswer,
    ApprovalChoice,
    SpendApprovalRequest,
    ToolApprovalRequest,
)
from portico.ui.chat.markdown_view import RichLabel
from portico.ui.chat.marks import count, mark_html
from portico.ui.chat.thumbnails import ImageSource, ImageThumb
from portico.ui.palette import set_tone
from portico.ui.text import plain_label, rich, set_plain

TEXT_PREVIEW = 4000  # characters of result text shown at most (Save keeps the whole)
COLLAPSE_LINES = 8  # a longer result shows this many lines until "Show all"
COLLAPSE_CHARS = 800  # ... or this many characters


def collapsed_text(text: str) -> str | None:
    """The start of a long result (None: short enough to show whole)."""
    lines = text.split("\n")
    if len(lines) <= COLLAPSE_LINES and len(text) <= COLLAPSE_CHARS:
        return None
    return "\n".join(lines[:COLLAPSE_LINES])[:COLLAPSE_CHARS] + "\n…"


CHOICE_LABELS: dict[ApprovalChoice, str] = {
    ApprovalChoice.ONCE: "Allow &Once",
    ApprovalChoice.SESSION: "Allow for &Session",
    ApprovalChoice.ALWAYS: "&Always Allow",
    ApprovalChoice.DENY: "&Deny",
}

OUTCOME_WORDS = {
    "ok": "Done",
    "error": "Failed",
    "denied": "You denied this call",
    "refused": "Not run: nobody was there to approve it",
    "cancelled": "Cancelled",
}


@dataclass
class CardState:
    """What a card shows; built from a ToolCall of a stored message or from events."""

    id: str
    server: str
    tool: str
    qualified_name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    raw_arguments: str = ""
    outcome: str | None = None  # None while running
    text: str = ""
    images: list[tuple[str, bytes]] = field(default_factory=list)  # (name or path, data)
    image_paths: list[Path] = field(default_factory=list)
    links: list[tuple[str, str]] = field(default_factory=list)  # (label, uri)
    is_error: bool = False
    error: str = ""
    duration: float = 0.0
    started: float = field(default_factory=time.monotonic)
    view_uri: str | None = None  # the view the stored call's tool declared


def arguments_text(state: CardState) -> str:
    if state.arguments:
        return json.dumps(dict(state.arguments), indent=2, ensure_ascii=False, default=str)
    return state.raw_arguments or "{}"


class ApprovalPanel(QFrame):
    """The Prompter's approval question, inline: Allow Once / Session / Always / Deny and
    "any arguments". Enter never allows; Deny takes the focus."""

    answered = Signal(object)  # ApprovalAnswer (tool) or ApprovalChoice (spend)

    def __init__(
        self, request: ToolApprovalRequest | SpendApprovalRequest, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.request = request
        self.setObjectName("approval")
        self.setAccessibleName("approval")
        column = QVBoxLayout(self)
        column.setContentsMargins(8, 6, 8, 6)
        spend = isinstance(request, SpendApprovalRequest)
        title = "Spend limit reached" if spend else "Allow this tool call?"
        self.title = QLabel(f"<b>{title}</b>")
        column.addWidget(self.title)
        lines: list[str] = []
        if isinstance(request, ToolApprovalRequest):
            if request.reason:
                lines.append(f"Asked because: {request.reason}")
            lines += [x for x in (request.cost_line, request.spend_line) if x]
            choices = request.choices
        else:
            lines += [request.limit_line, request.cost_line, request.spend_line]
            choices = tuple(
                c for c in request.choices if c in (ApprovalChoice.ONCE, ApprovalChoice.DENY)
            )
        self.details = plain_label("\n".join(lines), multiline=True)
        self.details.setAccessibleName("approval details")
        column.addWidget(self.details)
        self.details.setVisible(bool(lines))  # in its parent first: alone, it is a window
        self.any_arguments: QCheckBox | None = None
        widenable = {ApprovalChoice.SESSION, ApprovalChoice.ALWAYS}
        if (
            isinstance(request, ToolApprovalRequest)
            and request.offers_any_arguments
            and widenable & set(choices)
        ):
            self.any_arguments = QCheckBox("Also allow with a&ny arguments")
            self.any_arguments.setAccessibleName("Also allow with any arguments")
            column.addWidget(self.any_arguments)
        row = QHBoxLayout()
        self.buttons: dict[ApprovalChoice, QPushButton] = {}
        ordered = [c for c in CHOICE_LABELS if c in choices]
        if ApprovalChoice.DENY not in ordered:
            ordered.append(ApprovalChoice.DENY)
        for choice in ordered:
            button = QPushButton(CHOICE_LABELS[choice])
            button.setAccessibleName(CHOICE_LABELS[choice].replace("&", ""))
            button.setAutoDefault(False)
            button.setDefault(False)
            button.clicked.connect(lambda _=False, c=choice: self._choose(c))
            row.addWidget(button)
            self.buttons[choice] = button
        row.addStretch(1)
        column.addLayout(row)
        self.deny_button = self.buttons[ApprovalChoice.DENY]

    def _choose(self, choice: ApprovalChoice) -> None:
        for button in self.buttons.values():
            button.setEnabled(False)
        if isinstance(self.request, SpendApprovalRequest):
            self.answered.emit(choice)
            return
        widen = (
            self.any_arguments is not None
            and self.any_arguments.isChecked()
            and choice in (ApprovalChoice.SESSION, ApprovalChoice.ALWAYS)
        )
        self.answered.emit(ApprovalAnswer(choice, any_arguments=widen))


class ToolCard(QFrame):
    cancelRequested = Signal(str)  # call id
    approvalAnswered = Signal(str, object)  # call id, ApprovalAnswer | ApprovalChoice
    fetchRequested = Signal(str)  # call id: fetch the result of its task
    resized = Signal()  # its result was expanded or collapsed (the message measures again)

    def __init__(
        self, state: CardState, icon: QIcon | None = None, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.state = state
        self.setObjectName("toolcard")
        self.setAccessibleName(f"tool call {state.qualified_name}")
        column = QVBoxLayout(self)
        column.setContentsMargins(8, 6, 8, 6)
        column.setSpacing(4)
        header = QHBoxLayout()
        self.icon = QLabel()
        if icon is not None and not icon.isNull():
            self.icon.setPixmap(icon.pixmap(16, 16))
        else:
            self.icon.hide()
        header.addWidget(self.icon)
        where = f"{state.server} · " if state.server else ""
        self.name = QLabel(f"<b>{_esc(where)}{_esc(state.tool or state.qualified_name)}</b>")
        self.name.setAccessibleName("tool")
        header.addWidget(self.name)
        self.args_button = QToolButton()
        self.args_button.setText("Arguments")
        self.args_button.setCheckable(True)
        self.args_button.setArrowType(Qt.ArrowType.RightArrow)
        self.args_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.args_button.setAccessibleName("Show arguments")
        self.args_button.toggled.connect(self._toggle_args)
        header.addWidget(self.args_button)
        header.addStretch(1)
        self.status = QLabel()
        self.status.setAccessibleName("call status")
        header.addWidget(self.status)
        self.elapsed = QLabel()
        self.elapsed.setAccessibleName("elapsed time")
        set_tone(self.elapsed, "muted")
        header.addWidget(self.elapsed)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setAccessibleName(f"Cancel {state.tool}")
        self.cancel_button.setAutoDefault(False)
        self.cancel_button.clicked.connect(lambda: self.cancelRequested.emit(self.state.id))
        header.addWidget(self.cancel_button)
        column.addLayout(header)

        # The arguments view and the progress bar are built when first shown: most cards
        # in a long chat are finished calls nobody expands (cheaper to scroll into view).
        self._args_slot = QVBoxLayout()
        column.addLayout(self._args_slot)
        self._args_view: QLabel | None = None
        self._progress_slot = QVBoxLayout()
        self._progress_slot.setSpacing(4)
        column.addLayout(self._progress_slot)
        self._progress: tuple[QProgressBar, QLabel] | None = None

        # The server answered with a task (tasks extension): its status, and Fetch result
        # for one left running when Portico closed.
        task_row = QHBoxLayout()
        self.task_label = QLabel()
        self.task_label.setAccessibleName("task status")
        self.task_label.setWordWrap(True)
        set_tone(self.task_label, "muted")
        task_row.addWidget(self.task_label, 1)
        self.fetch_button = QPushButton("Fetch result")
        self.fetch_button.setAccessibleName(f"Fetch the result of {state.tool}")
        self.fetch_button.setAutoDefault(False)
        self.fetch_button.clicked.connect(lambda: self.fetchRequested.emit(self.state.id))
        task_row.addWidget(self.fetch_button)
        column.addLayout(task_row)
        self.task_label.hide()
        self.fetch_button.hide()

        self.approval: ApprovalPanel | None = None
        self.approval_slot = QVBoxLayout()
        column.addLayout(self.approval_slot)
        self.result_box = QVBoxLayout()
        column.addLayout(self.result_box)
        self.error_label = QLabel()
        self.error_label.setWordWrap(True)
        self.error_label.setAccessibleName("call error")
        self.error_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error_label.hide()
        column.addWidget(self.error_label)
        self.result_text: QLabel | None = None
        self.expand_button: QToolButton | None = None  # on a long result only
        self.expanded = False
        self.thumbs: list[ImageThumb] = []

        self._ticker: QTimer | None = None
        if state.outcome is None:
            self._start_ticker()
        self.refresh()

    @property
    def args_view(self) -> QLabel:
        if self._args_view is None:
            view = QLabel()
            set_plain(view, arguments_text(self.state), multiline=True)
            view.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
            view.setWordWrap(True)
            view.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            view.setAccessibleName("arguments")
            view.hide()
            self._args_slot.addWidget(view)
            self._args_view = view
        return self._args_view

    def _progress_widgets(self) -> tuple[QProgressBar, QLabel]:
        if self._progress is None:
            bar = QProgressBar()
            bar.setAccessibleName("progress")
            bar.setMaximumHeight(12)
            bar.setTextVisible(False)
            bar.hide()
            self._progress_slot.addWidget(bar)
            text = QLabel()
            text.setAccessibleName("progress message")
            set_tone(text, "muted")
            text.hide()
            self._progress_slot.addWidget(text)
            self._progress = (bar, text)
        return self._progress

    @property
    def progress(self) -> QProgressBar:
        return self._progress_widgets()[0]

    @property
    def progress_text(self) -> QLabel:
        return self._progress_widgets()[1]

    # --- live updates ----------------------------------------------------------------

    def _start_ticker(self) -> None:
        # Elapsed time ticks once a second while the call runs (a display clock, not a poll).
        self._ticker = QTimer(self)
        self._ticker.setInterval(1000)
        self._ticker.timeout.connect(self._show_elapsed)
        self._ticker.start()

    def _show_elapsed(self) -> None:
        seconds = (
            self.state.duration
            if self.state.outcome is not None
            else time.monotonic() - self.state.started
        )
        self.elapsed.setText(f"{seconds:.1f} s" if seconds < 10 else f"{seconds:.0f} s")

    def set_progress(self, progress: float, total: float | None, message: str | None) -> None:
        self.progress.show()
        if total and total > 0:
            self.progress.setRange(0, 1000)
            self.progress.setValue(int(min(progress / total, 1.0) * 1000))
            self.progress.setAccessibleDescription(f"{progress:g} of {total:g}")
        else:
            self.progress.setRange(0, 0)  # busy indicator
        if message:
            set_plain(self.progress_text, message)
            self.progress_text.show()

    def show_task(self, text: str, *, fetchable: bool = False) -> None:
        """The call's task: one line of status; Fetch result when it can be fetched."""
        set_plain(self.task_label, text)
        self.task_label.show()
        self.fetch_button.setVisible(fetchable)
        self.fetch_button.setEnabled(True)

    def ask(self, request: ToolApprovalRequest | SpendApprovalRequest) -> ApprovalPanel:
        self.clear_approval()
        panel = ApprovalPanel(request)
        panel.answered.connect(lambda answer: self.approvalAnswered.emit(self.state.id, answer))
        self.approval_slot.addWidget(panel)
        panel.show()  # now, so the pane can give its Deny button the focus
        self.approval = panel
        self.status.setText("Waiting for you")
        set_tone(self.status, "warning")
        return panel

    def clear_approval(self) -> None:
        if self.approval is not None:
            self.approval.hide()
            self.approval.deleteLater()
            self.approval = None

    def approval_settled(self, choice: str | None, note: str) -> None:
        self.clear_approval()
        if choice is None:
            set_plain(self.status, note or "Not answered")
        elif choice == ApprovalChoice.DENY.value:
            self.status.setText("You denied this call")
        else:
            self.status.setText("Running")
            set_tone(self.status, "muted")

    def cancelling(self) -> None:
        """Cancel was pressed: the call's server is being told."""
        self.cancel_button.setEnabled(False)
        self.status.setText("Cancelling…")
        set_tone(self.status, "muted")

    def finish(self, state: CardState) -> None:
        self.state = state
        if self._ticker is not None:
            self._ticker.stop()
        self.clear_approval()
        self.refresh()

    def refresh(self) -> None:
        state = self.state
        running = state.outcome is None
        self.cancel_button.setVisible(running)
        self.cancel_button.setEnabled(running)
        self._show_elapsed()
        if running:
            if self.approval is None:
                self.status.setText("Running")
                set_tone(self.status, "muted")
            return
        if self._progress is not None:
            self.progress.hide()
            self.progress_text.hide()
        outcome = state.outcome or "ok"
        words = OUTCOME_WORDS.get(outcome, outcome)
        if outcome == "ok" and state.is_error:
            words = "The tool reported an error"
        error = state.error
        if outcome == "cancelled" and error == CANCELLED_BY_PERSON:
            words = "You cancelled this call"
            error = "Its server was told to stop, and the model was told you cancelled it."
        self.status.setText(words)
        tone = (
            "ok"
            if outcome == "ok" and not state.is_error
            else "muted"
            if outcome in ("denied", "cancelled")
            else "warning"
            if outcome == "refused"
            else "error"
        )
        set_tone(self.status, tone)  # type: ignore[arg-type]
        if error:
            set_plain(self.error_label, error, multiline=True)
            set_tone(self.error_label, "muted" if outcome in ("denied", "cancelled") else "error")
            self.error_label.show()
        self._show_result()

    def _show_result(self) -> None:
        state = self.state
        while self.result_box.count():
            item = self.result_box.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.deleteLater()
        self.thumbs = []
        self.expand_button = None
        self.result_text = None  # the old label is deleted: nothing may reach it
        text = state.text
        if text:
            label = QLabel()
            label.setWordWrap(True)
            label.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
            label.setTextInteractionFlags(
                Qt.TextInteractionFlag.TextSelectableByMouse
                | Qt.TextInteractionFlag.TextSelectableByKeyboard
            )
            label.setAccessibleName("result")
            self.result_box.addWidget(label)
            self.result_text = label
            if collapsed_text(text) is not None:  # long: collapsed until "Show all"
                button = QToolButton()
                button.setCheckable(True)
                button.setChecked(self.expanded)
                button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
                button.setProperty("lines", text.count("\n") + 1)
                button.toggled.connect(self._toggle_result)
                self.result_box.addWidget(button, 0, Qt.AlignmentFlag.AlignLeft)
                self.expand_button = button
            self._fill_result()
        # decoded in a worker (ui/chat/thumbnails.py): a large image would stall the GUI
        images: list[tuple[str, ImageSource]] = list(state.images)
        images += [(path.name, path) for path in state.image_paths]
        if images:
            row = QHBoxLayout()
            for name, source in images:
                thumb = ImageThumb(source, name)
                self.thumbs.append(thumb)
                row.addWidget(thumb)
            row.addStretch(1)
            holder = QWidget()
            holder.setLayout(row)
            self.result_box.addWidget(holder)
        for label_text, uri in state.links:
            link = RichLabel(
                f"🔗 <a href='{_esc(uri)}'>{_esc(label_text)}</a> <small>{_esc(uri)}</small>"
            )
            link.setAccessibleName(f"resource link {label_text}")
            self.result_box.addWidget(link)

    def _fill_result(self) -> None:
        """The result's text, whole (up to TEXT_PREVIEW) or, when long and collapsed,
        its first lines."""
        label, text = self.result_text, self.state.text
        if label is None:
            return
        short = collapsed_text(text)
        if short is not None and not self.expanded:
            shown = short
        else:
            shown = text if len(text) <= TEXT_PREVIEW else text[:TEXT_PREVIEW] + "\n…"
        set_plain(label, shown, multiline=True)
        button = self.expand_button
        if button is not None:
            lines = button.property("lines")
            button.setText("Show less" if self.expanded else f"Show all ({lines} lines)")
            button.setArrowType(
                Qt.ArrowType.DownArrow if self.expanded else Qt.ArrowType.RightArrow
            )
            button.setAccessibleName("Collapse result" if self.expanded else "Expand result")

    def mark(self, query: str, current: int | None, start: int) -> int:
        """Find's marks in the result (expanded when the current match is in it); how
        many occurrences the whole result holds."""
        label = self.result_text
        found = count(self.state.text, query)
        if label is None or not found:
            if label is not None and label.textFormat() == Qt.TextFormat.RichText:
                self._fill_result()
            return found
        button = self.expand_button
        if current is not None and start <= current < start + found and button is not None:
            button.setChecked(True)  # the match may be below the first lines
        self._fill_result()
        escaped = html.escape(label.text(), quote=False)
        marked, _n = mark_html(escaped, query, current, start)
        label.setTextFormat(Qt.TextFormat.RichText)
        label.setText(f"<pre style='white-space:pre-wrap'>{marked}</pre>")
        return found

    def _toggle_result(self, expanded: bool) -> None:
        self.expanded = expanded
        self._fill_result()
        self.resized.emit()

    def _toggle_args(self, shown: bool) -> None:
        self.args_view.setVisible(shown)
        self.args_button.setArrowType(Qt.ArrowType.DownArrow if shown else Qt.ArrowType.RightArrow)
        self.args_button.setAccessibleName("Hide arguments" if shown else "Show arguments")


def _esc(text: str) -> str:
    return rich(text, multiline=False)
