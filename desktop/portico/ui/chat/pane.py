"""The Chats place: the conversation list beside the chat pane (header with the server
status strip, spend meter and token usage; the transcript or the welcome; the composer).

Widgets only: ``ui/chat/controller.py`` drives them from the chat core's events.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from portico.chat.context_meter import ContextEstimate
from portico.chat.cost import money
from portico.runtime.events import ServerState, Status
from portico.text import visible
from portico.ui.chat.composer import Composer
from portico.ui.chat.conversation_list import ConversationList
from portico.ui.chat.find_bar import FindBar, TranscriptFind
from portico.ui.chat.settings_panel import ChatSettingsPanel
from portico.ui.chat.text_view import ConversationText
from portico.ui.chat.transcript import TranscriptView
from portico.ui.palette import set_tone

NEEDS_PERSON = (Status.NEEDS_AUTH, Status.AWAITING_TRUST)


def strip_text(states: Iterable[ServerState]) -> tuple[str, str | None]:
    """("6 servers · 87 tools · 1 needs sign-in", the first server that needs the person)."""
    states = [s for s in states if s.status is not Status.STOPPED]
    if not states:
        return "No servers", None
    tools = sum(s.tool_count for s in states if s.status in (Status.RUNNING, Status.LAZY))
    parts = [f"{len(states)} server{'s' if len(states) != 1 else ''}", f"{tools} tools"]
    sign_in = [s for s in states if s.status is Status.NEEDS_AUTH]
    review = [s for s in states if s.status is Status.AWAITING_TRUST]
    failed = [s for s in states if s.status in (Status.FAILED, Status.COOLDOWN)]
    if sign_in:
        parts.append(f"{len(sign_in)} need{'s' if len(sign_in) == 1 else ''} sign-in")
    if review:
        parts.append(f"{len(review)} need{'s' if len(review) == 1 else ''} review")
    if failed:
        parts.append(f"{len(failed)} failing")
    first = next(iter(sign_in + review + failed), None)
    return " · ".join(parts), first.name if first else None


def spend_text(spend: Mapping[str, float], limits: Mapping[str, tuple[float, str]]) -> str:
    parts = []
    for server, (limit, unit) in sorted(limits.items()):
        used = spend.get(server, 0.0)
        parts.append(f"{server} {used:g}/{limit:g} {unit}")
    return "Spend: " + ", ".join(parts) if parts else ""


class ChatPane(QWidget):
    serversRequested = Signal(str)  # the server to show ("" for the list)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("chat")
        column = QVBoxLayout(self)
        column.setContentsMargins(8, 6, 8, 8)
        column.setSpacing(6)
        header = QHBoxLayout()
        self.title = QLabel("New chat")
        self.title.setAccessibleName("chat title")
        self._chat_title = "New chat"  # shown again when the welcome gives way to the chat
        self._welcome: QWidget | None = None
        font = self.title.font()
        font.setBold(True)
        font.setPointSizeF(max(font.pointSizeF(), 9.0) * 1.15)
        self.title.setFont(font)
        header.addWidget(self.title, 1)
        self.usage = QLabel()
        self.usage.setAccessibleName("token usage")
        set_tone(self.usage, "muted")
        header.addWidget(self.usage)
        self.spend = QLabel()
        self.spend.setAccessibleName("spend meter")
        header.addWidget(self.spend)
        self.context = QPushButton()
        self.context.setFlat(True)
        self.context.setAutoDefault(False)
        self.context.setAccessibleName("context meter")
        self.context.setVisible(False)
        self.context.clicked.connect(self._toggle_context_details)
        header.addWidget(self.context)
        self.strip = QPushButton("No servers")
        self.strip.setFlat(True)
        self.strip.setAutoDefault(False)
        self.strip.setAccessibleName("server status")
        self.strip.setToolTip("Open the Servers place")
        self.strip.clicked.connect(lambda: self.serversRequested.emit(self._needs or ""))
        header.addWidget(self.strip)
        self.select_button = QPushButton("Select text")
        self.select_button.setCheckable(True)
        self.select_button.setFlat(True)
        self.select_button.setAutoDefault(False)
        self.select_button.setAccessibleName("Select text")
        self.select_button.setToolTip(
            "Show the conversation as one text to select across messages (Ctrl+A selects it all)"
        )
        self.select_button.toggled.connect(self._select_toggled)
        header.addWidget(self.select_button)
        self.settings_button = QPushButton("Settings")
        self.settings_button.setFlat(True)
        self.settings_button.setAutoDefault(False)
        self.settings_button.setAccessibleName("chat settings")
        self.settings_button.setToolTip(
            "This chat's system prompt, temperature, max tokens and reasoning"
        )
        self.settings_button.clicked.connect(self._toggle_settings)
        header.addWidget(self.settings_button)
        column.addLayout(header)
        self.settings = ChatSettingsPanel()
        self.settings.setVisible(False)
        column.addWidget(self.settings)
        self.project = QLabel()
        self.project.setAccessibleName("project")
        self.project.setTextFormat(Qt.TextFormat.PlainText)
        self.project.setWordWrap(True)
        self.project.setVisible(False)
        set_tone(self.project, "muted")
        column.addWidget(self.project)
        self.context_details = QLabel()
        self.context_details.setAccessibleName("context breakdown")
        self.context_details.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.context_details.setVisible(False)
        set_tone(self.context_details, "muted")
        column.addWidget(self.context_details)
        self._needs: str | None = None

        self.find_bar = FindBar()
        column.addWidget(self.find_bar)
        self.stack = QStackedWidget()
        self.transcript = TranscriptView()
        self.finder = TranscriptFind(self.transcript, self.find_bar)
        self.stack.addWidget(self.transcript)
        self.text_view: ConversationText | None = None  # built when first asked for
        self.transcript.selectAllRequested.connect(lambda: self.select_text(everything=True))
        column.addWidget(self.stack, 1)
        self.composer = Composer()
        column.addWidget(self.composer)

    def set_states(self, states: Iterable[ServerState]) -> None:
        text, needs = strip_text(states)
        self._needs = needs
        self.strip.setText(text)
        self.strip.setAccessibleName(f"server status: {text}")
        set_tone(self.strip, "warning" if needs else "muted")

    def set_spend(
        self, spend: Mapping[str, float], limits: Mapping[str, tuple[float, str]]
    ) -> None:
        text = spend_text(spend, limits)
        self.spend.setText(text)
        self.spend.setVisible(bool(text))
        over = any(spend.get(s, 0.0) >= limit for s, (limit, _u) in limits.items())
        set_tone(self.spend, "warning" if over else "muted")

    def set_usage(
        self,
        input_tokens: int,
        output_tokens: int,
        total_in: int,
        total_out: int,
        cost: tuple[float, float, str] | None = None,
    ) -> None:
        """The turn's tokens and the chat's (as the providers counted them); ``cost``:
        (the turn's, the chat's, currency) when the model has a price."""
        turn = chat = ""
        if cost is not None:
            turn, chat = f" · {money(cost[0], cost[2])}", f" · {money(cost[1], cost[2])}"
        self.usage.setText(
            f"Turn: {input_tokens:,} in · {output_tokens:,} out{turn}"
            f"  ·  Chat: {total_in:,} in · {total_out:,} out{chat}"
        )

    def set_chat_usage(
        self, total_in: int, total_out: int, cost: float = 0.0, currency: str = ""
    ) -> None:
        """An opened chat: its tokens so far (nothing before its first answer)."""
        shown = total_in or total_out
        spent = f" · {money(cost, currency)}" if currency else ""
        self.usage.setText(f"Chat: {total_in:,} in · {total_out:,} out{spent}" if shown else "")

    def set_context(self, estimate: ContextEstimate | None) -> None:
        """What the next request will send (a local estimate); a warning tone when it
        nears the model's context length. Click for the breakdown."""
        if estimate is None:
            self.context.setVisible(False)
            self.context_details.setVisible(False)
            return
        details = "\n".join(estimate.breakdown())
        self.context.setText(estimate.summary())
        self.context.setToolTip(details)
        self.context_details.setText(details)
        self.context.setVisible(True)
        set_tone(self.context, "warning" if estimate.near_limit else "muted")

    def set_project(self, line: str) -> None:
        """What the chat takes from its project (instructions, model, tool set)."""
        self.project.setText(visible(line))
        self.project.setVisible(bool(line))

    def _toggle_settings(self) -> None:
        self.settings.setVisible(not self.settings.isVisible())

    def _toggle_context_details(self) -> None:
        self.context_details.setVisible(not self.context_details.isVisible())

    # --- Select text ------------------------------------------------------------------

    def select_text(self, everything: bool = False) -> ConversationText:
        """Show the conversation as one document (drag across messages, Ctrl+C copies
        plain text); ``everything``: select it all (Ctrl+A in the transcript)."""
        view = self.text_view
        if view is None:
            view = self.text_view = ConversationText()
            view.closeRequested.connect(self.end_select)
            self.stack.addWidget(view)
        top = self.transcript.top_message()

        def placed() -> None:
            if everything:
                view.select_everything()
            else:
                view.go_to_message(top)

        view.load(self.transcript.text_source(), around=top, then=placed)
        self.stack.setCurrentWidget(view)
        self.select_button.blockSignals(True)
        self.select_button.setChecked(True)
        self.select_button.setText("Back to chat")
        self.select_button.blockSignals(False)
        view.setFocus(Qt.FocusReason.OtherFocusReason)
        return view

    def end_select(self) -> None:
        self.select_button.blockSignals(True)
        self.select_button.setChecked(False)
        self.select_button.setText("Select text")
        self.select_button.blockSignals(False)
        if self.text_view is not None and self.stack.currentWidget() is self.text_view:
            self.stack.setCurrentWidget(self.transcript)
            self.text_view.clear()  # a long chat's document is not kept in memory
            self.transcript.setFocus(Qt.FocusReason.OtherFocusReason)

    def _select_toggled(self, on: bool) -> None:
        if on:
            self.select_text()
        else:
            self.end_select()

    def set_chat_title(self, text: str) -> None:
        self._chat_title = text
        if self._welcome is None or self.stack.currentWidget() is not self._welcome:
            self.title.setText(text)

    def show_welcome(self, welcome: QWidget) -> None:
        if self.stack.indexOf(welcome) < 0:
            self.stack.addWidget(welcome)
        self.stack.setCurrentWidget(welcome)
        self._welcome = welcome
        self.title.setText("Welcome")
        self.composer.hide()  # the welcome's own buttons lead on; the chat comes after
        self.select_button.hide()

    def open_find(self) -> None:
        """Ctrl+F: the find bar over the transcript (the chat, not Select text)."""
        if self._welcome is not None and self.stack.currentWidget() is self._welcome:
            return
        self.end_select()
        self.finder.open()

    def show_transcript(self) -> None:
        self.end_select()
        self.stack.setCurrentWidget(self.transcript)
        self.title.setText(self._chat_title)
        self.composer.show()
        self.select_button.show()


class ChatsPlace(QWidget):
    """The Chats place of the rail: conversations on the left, the pane on the right."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Chats")
        self.conversations = ConversationList()
        self.pane = ChatPane()
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(self.conversations)
        self.splitter.addWidget(self.pane)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([240, 720])
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.splitter)

    def focus(self, widget: QWidget) -> None:
        """The focus on ``widget``, unless the person is in another place: a chat that
        opens late (the first start, a deleted chat) or an approval that arrives while they
        are in Servers never takes the keyboard from them (keys would go to the hidden
        widget: Space on a hidden Deny denies the call)."""
        if widget.isVisibleTo(self.window()):
            widget.setFocus(Qt.FocusReason.OtherFocusReason)

    def focus_input(self) -> None:
        self.focus(self.pane.composer.input)
