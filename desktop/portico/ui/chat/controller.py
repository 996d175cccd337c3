"""Drives the Chats place from the chat core: opens chats, sends turns, renders events.

The chat core runs on the runtime thread (``ui/runtime_thread/chat_service.py``); this
object lives on the GUI thread, calls the service through ``RuntimeThread.submit`` and
gets the turn's events through the ChatBridge's one queued signal. It renders only
those events.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import uuid
from collections.abc import Callable, Coroutine, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QWidget

from portico.chat import commands
from portico.chat import events as ev
from portico.chat.cost import money
from portico.chat.messages import Attachment as CoreAttachment
from portico.chat.messages import Message
from portico.ui.chat import task_cards
from portico.ui.chat.bridge import ChatBridge
from portico.ui.chat.card_state import apply_finished, from_started, from_stored, stored_result
from portico.ui.chat.completion import Completion
from portico.ui.chat.composer import Attachment
from portico.ui.chat.conversation_list import ConversationRow
from portico.ui.chat.find_bar import FIND
from portico.ui.chat.markdown import warm_up
from portico.ui.chat.message_widget import MessageWidget
from portico.ui.chat.pane import ChatsPlace
from portico.ui.chat.tool_card import ToolCard
from portico.ui.chat.views import ChatViews, add_missing_note
from portico.ui.ops import Ops
from portico.ui.palette import Tone, set_tone
from portico.ui.runtime_thread.chat_service import (
    ChatService,
    ChatSnapshot,
    InlineApproval,
    InlineWithdrawn,
    TurnEnded,
)
from portico.ui.shortcuts import Key, bind
from portico.ui.text import plain_label

if TYPE_CHECKING:
    from portico.runtime.results import ToolResult
    from portico.ui.facade import RuntimeThread

log = logging.getLogger(__name__)

NEW_CHAT = Key(("Ctrl+N",), "New chat", "Everywhere")
SEARCH_CHATS = Key(("Ctrl+Shift+F",), "Search all chats", "Everywhere")
MESSAGE_INPUT = Key(("Ctrl+L",), "Go to the message input", "Everywhere")
PICK_MODEL = Key(("Ctrl+M",), "Choose the model", "Everywhere")
YOLO = Key(("Ctrl+Shift+Y",), "YOLO: run tools without asking (on / off)", "Everywhere")

_NOTICE_TONES: dict[str, Tone] = {"info": "muted", "warning": "warning", "error": "error"}


class ChatController(QObject):
    opened = Signal(str)  # conversation id now shown
    turnEnded = Signal(str)  # conversation id
    runningChanged = Signal(bool)  # a turn started or ended (the app defers full GCs)
    eventRendered = Signal(object)  # every event, after it was rendered (tests wait on it)

    def __init__(self, place: ChatsPlace, runtime: RuntimeThread, bridge: ChatBridge) -> None:
        super().__init__(place)
        self.place = place
        self.pane = place.pane
        self.transcript = place.pane.transcript
        self.composer = place.pane.composer
        self.runtime = runtime
        self.bridge = bridge
        self.service: ChatService | None = None
        self.current: ChatSnapshot | None = None
        self.cards: dict[str, ToolCard] = {}
        self.running = False
        self._turns = 0  # turns begun here: an after-turn resync older than the newest is moot
        self._pending_user: str | None = None
        self._ids = itertools.count(1)
        self.ops = Ops()  # every background action; a failure is a notice in the chat
        self._completions: dict[tuple[str, str], list[Completion]] = {}
        self._prompt_hints: dict[str, str] = {}
        self._resources: list[Completion] | None = None  # the @ rows, None: not asked yet
        self.query = ""
        self.archived = False  # the list shows the archived chats
        self.views = ChatViews(
            self.transcript,
            lambda: self.service,
            lambda: self.current.id if self.current is not None else None,
        )
        bridge.delivered.connect(self.on_event)
        self._wire()

    # --- wiring --------------------------------------------------------------------------

    def _wire(self) -> None:
        c = self.composer
        c.submitted.connect(self.send)
        c.stopRequested.connect(self.stop)
        c.modelChosen.connect(lambda ref: self._spawn(self.set_model(ref)))
        c.yoloToggled.connect(lambda on: self._spawn(self.set_yolo(on)))
        self.pane.settings.saved.connect(lambda typed: self._spawn(self.save_settings(typed)))
        c.source = self.completion_source
        c.measure = lambda attachment: self._spawn(self._measure(attachment))
        t = self.transcript
        t.editSubmitted.connect(self.edit)
        t.regenerateRequested.connect(self.regenerate)
        t.retryRequested.connect(self.retry)
        t.switchRequested.connect(lambda mid: self._spawn(self.switch_to(mid)))
        t.cancelCall.connect(self.cancel_call)
        t.approvalAnswered.connect(self.answer)
        lst = self.place.conversations
        lst.selected.connect(lambda cid: self._spawn(self.open(cid)))
        lst.newRequested.connect(lambda: self._spawn(self.new_chat()))
        lst.renameRequested.connect(lambda cid, title: self._spawn(self.rename(cid, title)))
        lst.deleteRequested.connect(lambda cid: self._spawn(self.delete(cid)))
        lst.pinRequested.connect(lambda cid, on: self._spawn(self.set_pinned(cid, on)))
        lst.archiveRequested.connect(lambda cid, on: self._spawn(self.set_archived(cid, on)))
        lst.restoreRequested.connect(lambda cid: self._spawn(self.restore(cid)))
        lst.purgeRequested.connect(lambda cid: self._spawn(self.purge(cid)))
        lst.archivedToggled.connect(lambda on: self._spawn(self.show_archived(on)))
        lst.searchChanged.connect(lambda q: self._spawn(self.refresh_list(q)))
        # Window-wide: they bring the Chats place forward from anywhere in the window.
        for key, slot in (
            (NEW_CHAT, lambda: self._spawn(self.new_chat())),
            (FIND, self.pane.open_find),
            (SEARCH_CHATS, lambda: lst.search.setFocus(Qt.FocusReason.ShortcutFocusReason)),
            (MESSAGE_INPUT, self.place.focus_input),
            (PICK_MODEL, self._pick_model),
            (YOLO, lambda: c.yolo.toggle()),
        ):
            bind(self.place, key, partial(self._bring_forward, slot))

    def _bring_forward(self, then: Callable[[], object]) -> None:
        window = self.place.window()
        show = getattr(window, "show_chats", None)
        if callable(show) and not self.place.isVisible():
            show()
        then()

    def _pick_model(self) -> None:
        self.composer.model_picker.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.composer.model_picker.showPopup()

    def _spawn(self, coro: Coroutine[Any, Any, Any]) -> None:
        self.ops.spawn(coro, "chat action", failure=self._failed)

    def _failed(self, exc: Exception) -> None:
        log.info("chat action failed: %s", exc)
        self.add_notice(str(exc) or type(exc).__name__, "error")

    async def _call(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run a plain service method on the runtime loop and return its result."""

        async def run() -> Any:
            return fn(*args)

        return await self.runtime.submit(run())

    async def _offer_view(self, card: ToolCard, result: ToolResult) -> None:
        """A placeholder for the view under a card whose tool has one."""
        if self.service is None:
            return
        state = card.state
        uri = await self._call(self.service.view_of, state.qualified_name)
        if self.cards.get(state.id) is not card:
            return
        if uri is not None:
            self.views.add(
                card, uri, state.server, state.qualified_name, dict(state.arguments), result
            )
        elif state.view_uri is not None:
            add_missing_note(card, state.view_uri, state.server, state.tool)

    def _fetch_task(self, call_id: str) -> None:
        """Fetch result on a card: follow the call's task on its server (the card
        shows the task's status meanwhile, then the result)."""
        card, current = self.cards.get(call_id), self.current
        if card is None or current is None or self.service is None:
            return
        card.fetch_button.setEnabled(False)
        card.show_task("Fetching the task's result…")
        conversation = current.id

        async def fetch() -> None:
            assert self.service is not None
            try:
                record = await self.runtime.submit(self.service.fetch_task(conversation, call_id))
            except Exception as exc:
                expired = "no longer has task" in str(exc)
                card.show_task(f"Task: {exc}", fetchable=not expired)
                return
            card.finish(from_stored(record))
            card.show_task("Task completed — result fetched")

        self._spawn(fetch())

    def close(self) -> None:
        self.views.clear()
        self.ops.cancel_all()

    # --- chats ---------------------------------------------------------------------------

    async def attach(self, service: ChatService) -> None:
        self._spawn(asyncio.to_thread(warm_up))
        self.service = service
        await self.refresh_list()

    async def open_start(self, model: str | None = None) -> None:
        """A new chat, or the newest one if it is still empty; focus in the input.
        ``model``: the chat uses it (a model the first run just connected)."""
        assert self.service is not None
        snapshot = await self.runtime.submit(self.service.resume_or_new())
        if model and snapshot.model != model:
            snapshot = await self.runtime.submit(self.service.set_model(snapshot.id, model))
        await self.show(snapshot)
        self.place.focus_input()

    async def new_chat(self) -> None:
        assert self.service is not None
        if self.current is not None and not self.transcript.messages and not self.running:
            self.place.focus_input()
            return
        snapshot = await self.runtime.submit(self.service.new(self._model_ref()))
        await self.show(snapshot)
        await self.refresh_list()
        self.place.focus_input()

    async def open(self, conversation_id: str) -> None:
        assert self.service is not None
        if self.current is not None and self.current.id == conversation_id:
            return
        snapshot = await self.runtime.submit(self.service.open(conversation_id))
        await self.show(snapshot)

    async def show(self, snapshot: ChatSnapshot) -> None:
        assert self.service is not None
        self.current = snapshot
        self.views.clear()
        self.cards.clear()
        self._pending_user = None
        self.transcript.cut = snapshot.context_cut
        self.transcript.set_messages(list(snapshot.messages), snapshot.siblings)
        for widget in self.transcript.widgets.values():
            self.cards.update(widget.cards)
        task_cards.show_stored(self.cards, snapshot.tasks, self._fetch_task)
        for card in self.cards.values():
            if card.state.outcome == "ok" and not card.state.is_error:
                self._spawn(self._offer_view(card, stored_result(card.state.text)))
        self.pane.set_chat_title(snapshot.title or "New chat")
        self.composer.set_models(
            [(m.ref, m.label) for m in snapshot.models],
            snapshot.model,
            {m.ref for m in snapshot.models if m.vision},
        )
        self.composer.yolo.blockSignals(True)
        self.composer.yolo.setChecked(snapshot.yolo)
        self.composer.yolo.blockSignals(False)
        self.composer.yolo_warning.setVisible(snapshot.yolo)
        self.pane.set_spend(snapshot.spend, snapshot.limits)
        self.pane.set_chat_usage(*snapshot.tokens, snapshot.cost, snapshot.currency)
        self.pane.settings.show_settings(snapshot.settings, snapshot.kind)
        self.set_running(snapshot.busy)
        self.pane.show_transcript()
        self.place.conversations.select(snapshot.id)
        self._completions.clear()
        await self._call(self.service.show, snapshot.id)
        self.opened.emit(snapshot.id)
        self._spawn(self._load_prompt_hints())
        self._spawn(self.refresh_context())
        self._spawn(self.refresh_project())

    async def refresh_project(self) -> None:
        """The line naming what the shown chat takes from its project."""
        if self.service is None or self.current is None:
            return
        line = await self.runtime.submit(self.service.project_line(self.current.id))
        self.pane.set_project(line)

    async def refresh_context(self) -> None:
        """The context meter: what the next request of the shown chat will send."""
        if self.current is None or self.service is None:
            return
        shown = self.current.id
        estimate = await self.runtime.submit(self.service.context_estimate(shown))
        if self.current is not None and self.current.id == shown:
            self.pane.set_context(estimate)

    async def _load_prompt_hints(self) -> None:
        assert self.service is not None
        rows = await self.runtime.submit(self.service.prompt_completions())
        self._prompt_hints = dict(rows)

    async def reload_current(self) -> None:
        """Take the chat again from the core (after an edit, a regenerate, a branch switch)."""
        if self.current is None or self.service is None:
            return
        snapshot = await self._call(self.service.snapshot, self.current.id)
        await self.show(snapshot)

    async def refresh_list(self, query: str | None = None) -> None:
        if self.service is None:
            return
        if query is not None:
            self.query = query
        rows = await self.runtime.submit(self.service.rows(self.query, self.archived))
        current = self.current.id if self.current else None
        self.place.conversations.set_rows(
            [
                ConversationRow(r.id, r.title, r.updated, r.snippet, r.pinned, r.archived)
                for r in rows
            ],
            current,
        )

    async def rename(self, conversation_id: str, title: str) -> None:
        assert self.service is not None
        await self.runtime.submit(self.service.rename(conversation_id, title))
        if self.current is not None and self.current.id == conversation_id:
            self.pane.set_chat_title(title)
        await self.refresh_list()

    async def delete(self, conversation_id: str) -> None:
        """Deleted with an Undo (the list's bar); removed for good when the bar goes."""
        assert self.service is not None
        lst = self.place.conversations
        row = lst.row(conversation_id)
        await self.runtime.submit(self.service.delete(conversation_id))
        lst.show_undo(conversation_id, row.title if row is not None else "")
        if self.current is not None and self.current.id == conversation_id:
            self.current = None
            await self.open_start()
        await self.refresh_list()

    async def restore(self, conversation_id: str) -> None:
        assert self.service is not None
        await self.runtime.submit(self.service.restore(conversation_id))
        await self.refresh_list()
        await self.open(conversation_id)

    async def purge(self, conversation_id: str) -> None:
        assert self.service is not None
        await self.runtime.submit(self.service.purge(conversation_id))

    async def set_pinned(self, conversation_id: str, pinned: bool) -> None:
        assert self.service is not None
        await self.runtime.submit(self.service.set_pinned(conversation_id, pinned))
        await self.refresh_list()

    async def set_archived(self, conversation_id: str, archived: bool) -> None:
        assert self.service is not None
        await self.runtime.submit(self.service.set_archived(conversation_id, archived))
        await self.refresh_list()

    async def show_archived(self, on: bool) -> None:
        self.archived = on
        await self.refresh_list()

    async def set_model(self, ref: str) -> None:
        if self.current is None or self.service is None:
            return
        snapshot = await self.runtime.submit(self.service.set_model(self.current.id, ref))
        self.current = snapshot
        self.pane.settings.show_settings(snapshot.settings, snapshot.kind)

    async def save_settings(self, typed: dict[str, str]) -> None:
        """The settings panel's Save: stored with the chat, used from the next request; a
        bad value is told in the panel and nothing changes."""
        from portico.chat.settings import SettingsError

        if self.current is None or self.service is None:
            return
        try:
            snapshot = await self.runtime.submit(self.service.set_settings(self.current.id, typed))
        except SettingsError as exc:
            self.pane.settings.show_error(str(exc))
            return
        self.current = snapshot
        self.pane.settings.show_settings(snapshot.settings, snapshot.kind)
        self.pane.settings.show_error("")
        self._spawn(self.refresh_context())

    async def set_yolo(self, on: bool) -> None:
        if self.current is None or self.service is None:
            return
        await self.runtime.submit(self.service.set_yolo(self.current.id, on))

    async def switch_to(self, message_id: str) -> None:
        if self.current is None or self.service is None:
            return
        snapshot = await self.runtime.submit(self.service.switch_to(self.current.id, message_id))
        await self.show(snapshot)

    def _model_ref(self) -> str | None:
        return self.composer.current_model() or None

    # --- turns ---------------------------------------------------------------------------

    def send(self, text: str, attachments: Sequence[Attachment] = ()) -> None:
        self._spawn(self._send(text, list(attachments)))

    async def _send(self, text: str, attachments: list[Attachment]) -> None:
        if self.service is None:
            self.add_notice(
                "The chat is not ready yet: the server runtime is still starting.", "warning"
            )
            return
        if self.current is None:
            await self.open_start()
        assert self.current is not None
        files = [await _as_file(a) for a in attachments if a.kind != "resource"]
        resources = [(a.server, a.uri) for a in attachments if a.kind == "resource"]
        self._echo_user(text, files, resources)
        self.set_running(True)
        try:
            await self._call(self.service.send, self.current.id, text, files, resources)
        except Exception:
            self.set_running(False)
            raise

    async def _measure(self, attachment: Attachment) -> None:
        """An attached file's size and type, looked at in a thread, onto its chip."""
        from pathlib import Path

        from portico.chat.attachments import probe

        found = await asyncio.to_thread(probe, Path(attachment.path))
        self.composer.set_probe(attachment, found)

    def _echo_user(
        self, text: str, files: Sequence[str], resources: Sequence[tuple[str, str]] = ()
    ) -> None:
        from pathlib import Path

        temp = f"pending-{next(self._ids)}"
        message = Message(
            id=temp,
            role="user",
            text=text,
            attachments=[CoreAttachment("file", Path(p).name, path=Path(p)) for p in files]
            + [CoreAttachment("resource", u, server=s, uri=u) for s, u in resources],
        )
        self.transcript.add_message(message, local=True)  # until the core names it
        self._pending_user = temp
        self.transcript.jump_to_latest()

    def edit(self, message_id: str, text: str) -> None:
        if self.service is None or self.current is None:
            return
        self.transcript.truncate_from(message_id)
        self._echo_user(text, [])
        self._start("edit", message_id, text)

    def regenerate(self, message_id: str) -> None:
        if self.service is None or self.current is None:
            return
        self.transcript.truncate_from(message_id)
        self._start("regenerate", message_id)

    async def compact(self, mode: str) -> None:
        """Summarise or trim the older messages (the person's choice on a turn that did
        not fit), then run the turn again."""
        from portico.chat.conversation import CompactChoice

        if self.service is None or self.current is None or self.running:
            return
        try:
            done = await self.runtime.submit(self.service.compact(self.current.id, mode))
        except CompactChoice as choice:  # a summary would leave the oldest out: ask first
            self._offer_compact_choice(choice)
            return
        self.add_notice(done)
        self.retry()

    def _offer_compact_choice(self, choice: Exception) -> QWidget:
        from portico.chat.conversation import CompactChoice

        assert isinstance(choice, CompactChoice)
        row = QWidget()
        row.setAccessibleName("compact choice")
        line = QHBoxLayout(row)
        line.setContentsMargins(0, 0, 0, 0)
        label = plain_label(f"Not summarised yet: {choice}.", multiline=True)
        set_tone(label, "warning")
        line.addWidget(label, 1)
        for text, mode in (
            (f"Summarise the newest {choice.summarised}", "summarise-recent"),
            ("Trim all", "trim"),
        ):
            button = QPushButton(text)
            button.setAccessibleName(text)
            button.setAutoDefault(False)
            button.clicked.connect(lambda _=False, m=mode: self._spawn(self.compact(m)))
            line.addWidget(button)
        self.transcript.add_widget(row)
        return row

    def retry(self) -> None:
        if self.service is None or self.current is None:
            return
        last = self.transcript.messages[-1] if self.transcript.messages else None
        if last is not None and last.role == "assistant":
            self.transcript.truncate_from(last.id)
        self._start("retry")

    def _start(self, kind: str, *args: Any) -> None:
        assert self.service is not None and self.current is not None
        self.set_running(True)

        async def go() -> None:
            assert self.service is not None and self.current is not None
            try:
                await self._call(self.service.start_turn, self.current.id, kind, *args)
            except Exception:
                self.set_running(False)
                raise

        self._spawn(go())

    def stop(self) -> None:
        if self.service is None or self.current is None or not self.running:
            return
        self._spawn(self._call(self.service.stop, self.current.id))

    def cancel_call(self, call_id: str) -> None:
        """The card's Cancel: only that call stops; the model hears of it and goes on."""
        if self.service is None or self.current is None:
            return
        card = self.cards.get(call_id)
        if card is not None:
            card.cancelling()
        self._spawn(self._cancel_call(self.current.id, call_id))

    async def _cancel_call(self, conversation_id: str, call_id: str) -> None:
        assert self.service is not None
        if not await self._call(self.service.cancel_call, conversation_id, call_id):
            card = self.cards.get(call_id)
            if card is not None and card.state.outcome is None:
                card.refresh()  # it was not running (any more): Cancel comes back

    def answer(self, call_id: str, value: object) -> None:
        if self.service is None:
            return
        self._spawn(self._call(self.service.answer, call_id, value))

    def set_running(self, running: bool) -> None:
        changed = running != self.running
        self.running = running
        if changed and running:
            self._turns += 1
        if changed:
            self.runningChanged.emit(running)
        self.composer.set_running(running, "Answering… (Esc stops)" if running else "")
        self.transcript.set_running(running)

    # --- events --------------------------------------------------------------------------

    def on_event(self, conversation_id: str, event: object) -> None:
        if self.current is None or conversation_id != self.current.id:
            if isinstance(event, ev.TitleChanged | TurnEnded):
                self._spawn(self.refresh_list())
            return
        try:
            self._render(event)
        except Exception:
            log.exception("rendering %s failed", type(event).__name__)
        self.eventRendered.emit(event)

    def _answer_widget(self, message_id: str) -> MessageWidget:
        widget = self.transcript.message_widget(message_id) if message_id else None
        if widget is None:
            widget = self.transcript.add_message(
                Message(id=message_id or f"answer-{uuid.uuid4().hex[:8]}", role="assistant"),
                local=not message_id,  # a failure line with no answer: nothing stored
            )
        return widget

    def _render(self, event: object) -> None:
        t = self.transcript
        if isinstance(event, ev.UserMessageAdded):
            self._user_added(event)
        elif isinstance(event, ev.TurnStarted):
            if event.user_message_id and self._pending_user:
                t.rename(self._pending_user, event.user_message_id)
                self._pending_user = None
            if t.message_widget(event.message_id) is None:
                t.add_message(Message(id=event.message_id, role="assistant", model=event.model))
            self.set_running(True)
        elif isinstance(event, ev.TextDelta):
            self._answer_widget(event.message_id)
            t.append_text(event.message_id, event.text)
        elif isinstance(event, ev.ReasoningDelta):
            t.flush()
            self._answer_widget(event.message_id).stream_thinking(event.text)
        elif isinstance(event, ev.ToolCallStarted):
            t.break_text(event.message_id)
            widget = (
                self._answer_widget(event.message_id) if event.message_id else self._last_answer()
            )
            self.cards[event.id] = widget.add_card(from_started(event))
        elif isinstance(event, ev.ToolCallTask):
            card = self.cards.get(event.id)
            if card is not None:
                task_cards.show_live(card, event)
        elif isinstance(event, ev.ToolCallProgress):
            card = self.cards.get(event.id)
            if card is not None:
                card.set_progress(event.progress, event.total, event.message)
        elif isinstance(event, ev.ApprovalAsked):
            card = self.cards.get(event.call_id)
            if card is not None:
                card.status.setText("Waiting for your approval")
        elif isinstance(event, InlineApproval):
            card = self.cards.get(event.call_id)
            if card is not None:
                panel = card.ask(event.request)
                t.ensureWidgetVisible(card)
                self.place.focus(panel.deny_button)
        elif isinstance(event, InlineWithdrawn):
            card = self.cards.get(event.call_id)
            if card is not None:
                card.clear_approval()
        elif isinstance(event, ev.ApprovalAnswered):
            card = self.cards.get(event.call_id)
            if card is not None:
                card.approval_settled(event.choice, event.note)
                if card.approval is None:
                    self.place.focus_input()
        elif isinstance(event, ev.ToolCallFinished):
            card = self.cards.get(event.id)
            if card is not None:
                card.finish(apply_finished(card.state, event))
                if event.outcome == "ok" and event.result is not None:
                    self._spawn(self._offer_view(card, event.result))
        elif isinstance(event, ev.Usage):
            self.pane.set_usage(
                event.turn_input_tokens or event.input_tokens,
                event.turn_output_tokens or event.output_tokens,
                event.total_input_tokens,
                event.total_output_tokens,
                None
                if event.turn_cost is None or event.total_cost is None
                else (event.turn_cost, event.total_cost, event.currency),
            )
            answered = t.message_widget(event.message_id) if event.message_id else None
            if answered is not None:
                answered.set_tokens(
                    event.turn_input_tokens,
                    event.turn_output_tokens,
                    None if event.turn_cost is None else money(event.turn_cost, event.currency),
                )
        elif isinstance(event, ev.SpendChanged):
            limits = self.current.limits if self.current else {}
            self.pane.set_spend(dict(event.totals), limits)
        elif isinstance(event, ev.Notice):
            self.add_notice(event.text, event.level)
        elif isinstance(event, ev.TitleChanged):
            self.pane.set_chat_title(event.title)
            self._spawn(self.refresh_list())
        elif isinstance(event, ev.ModelChanged):
            index = self.composer.model_picker.findData(event.model or "")
            if index >= 0:
                self.composer.model_picker.setCurrentIndex(index)
        elif isinstance(event, ev.YoloChanged):
            self.composer.yolo.blockSignals(True)
            self.composer.yolo.setChecked(event.on)
            self.composer.yolo.blockSignals(False)
            self.composer.yolo_warning.setVisible(event.on)
        elif isinstance(event, ev.ConversationChanged):
            self._spawn(self._follow(event.conversation_id))
        elif isinstance(event, ev.TurnFinished):
            if event.message_id:
                t.finish_text(event.message_id)
            if event.stop_reason == "stopped":
                stopped = (
                    t.message_widget(event.message_id) if event.message_id else self._last_answer()
                )
                if stopped is not None:
                    stopped.show_status("stopped")
                for card in self.cards.values():
                    if card.state.outcome is None:
                        card.state.outcome = "cancelled"
                        card.finish(card.state)
            elif event.stop_reason == "max_tokens":
                self.add_notice("The answer was cut at the model's token limit.", "warning")
        elif isinstance(event, ev.TurnFailed):
            t.flush()
            widget = self._answer_widget(event.message_id)
            widget.show_status("failed", event.error)
            if event.message_id:  # a model turn: the question is kept, Retry asks again
                widget.offer_retry(event.retry_after)
                if event.kind == "context":  # never trimmed silently: the person chooses
                    if widget.compact_buttons is None:
                        widget.compactRequested.connect(
                            lambda mode: self._spawn(self.compact(mode))
                        )
                    widget.offer_compact()
            else:
                widget.retry_button.setVisible(event.retryable)
        elif isinstance(event, TurnEnded):
            self.set_running(False)
            self.turnEnded.emit(self.current.id if self.current else "")
            self._spawn(self._after_turn())

    def _user_added(self, event: ev.UserMessageAdded) -> None:
        """The core's version of the person's message: its id, the rendered prompt text,
        the resolved resources."""
        t = self.transcript
        pending, self._pending_user = self._pending_user, None
        echo = t.message_widget(pending) if pending else None
        same = echo is not None and echo.message.text == event.text and not event.attachments
        if echo is not None and same and pending is not None:
            t.rename(pending, event.message_id)
            return
        if pending is not None:
            t.truncate_from(pending)
        if t.message_widget(event.message_id) is None:
            # as stored: each with its type and size (and an image with its file)
            attachments = list(event.details) or [
                CoreAttachment("resource", name) for name in event.attachments
            ]
            t.add_message(
                Message(id=event.message_id, role="user", text=event.text, attachments=attachments)
            )

    async def _after_turn(self) -> None:
        """Take in the core's copy of the shown chat (ids, siblings, stored fields) in
        place. The transcript is rebuilt only when what the core stores is not what is
        shown; rows the core never stores (a command's echo and its answer, see
        ``TranscriptView.local``) do not count, and a copy taken before a newer turn began
        is dropped (that turn's own resync follows): either made every widget new, an
        expanded result collapsed and a live view closed."""
        if self.current is None or self.service is None:
            return
        turns, shown_id = self._turns, self.current.id
        snapshot = await self._call(self.service.snapshot, shown_id)
        if self.running or turns != self._turns or self.current is None:
            return
        if self.current.id != shown_id:
            return  # another chat is shown now
        if [m.id for m in snapshot.messages] != self.transcript.stored_ids():
            await self.show(snapshot)  # the core's branch is not the one shown
        else:
            self.current = snapshot
            self.transcript.sync(list(snapshot.messages), snapshot.siblings)
            self.transcript.set_cut(snapshot.context_cut)
        await self.refresh_list()
        await self.refresh_context()
        await self.refresh_project()  # the instructions were reviewed in this turn

    async def _follow(self, conversation_id: str) -> None:
        assert self.service is not None
        snapshot = await self.runtime.submit(self.service.open(conversation_id))
        await self.show(snapshot)
        await self.refresh_list()

    def _last_answer(self) -> MessageWidget:
        for message in reversed(self.transcript.messages):
            if message.role == "assistant":
                widget = self.transcript.message_widget(message.id)
                if widget is not None:
                    return widget
        return self._answer_widget("")

    def add_notice(self, text: str, level: str = "info") -> QLabel:
        label = plain_label(text, multiline=True)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        label.setAccessibleName(f"{level} notice")
        set_tone(label, _NOTICE_TONES.get(level, "muted"))
        self.transcript.add_widget(label)
        return label

    # --- completion ----------------------------------------------------------------------

    def completion_source(self, trigger: str, word: str) -> list[Completion]:
        if trigger == "@":  # every resource at once; the popup filters them as one types
            if not word or self._resources is None:
                self._spawn(self._fetch_resources())
            return self._resources or []
        key = (trigger, word)
        if key in self._completions:
            return self._completions[key]
        self._spawn(self._fetch_completions(trigger, word))
        # Meanwhile: what this trigger offered before (the popup filters it by the word).
        for (t, _w), rows in reversed(list(self._completions.items())):
            if t == trigger:
                return rows
        return []

    async def _fetch_resources(self) -> None:
        """The running servers' resources (and templates, inserted as text to fill in)."""
        if self.service is None:
            return
        found = await self.runtime.submit(self.service.resource_completions())
        rows = []
        for server, uri, name, template in found:
            label = f"@{server}:{uri}"
            if template:
                rows.append(Completion(label, label, f"{name} (template: fill it in)", "template"))
            else:
                rows.append(Completion(label + " ", label, name, "resource", (server, uri)))
        self._resources = rows
        self.composer.refresh_completions()

    async def _fetch_completions(self, trigger: str, word: str) -> None:
        if self.service is None or self.current is None:
            return
        text = {"/": f"/{word}", "call": f"/call {word}", "@": f"@{word}"}[trigger]
        found: list[str] = await self._call(self.service.completions, self.current.id, text)
        rows = []
        for item in found:
            shown = item.split(" ")[-1] if trigger == "call" else item
            if trigger == "/" and not shown.startswith("/"):
                shown = "/" + shown
            if trigger == "@" and not shown.startswith("@"):
                shown = "@" + shown
            kind = {"/": "command", "call": "tool", "@": "resource"}[trigger]
            hint = self._prompt_hints.get(shown, "")
            if hint:
                kind = "prompt"
            elif trigger == "/":  # a built-in: what the command table says it does
                hint = commands.hint(shown[1:])
            insert = shown if shown.endswith(":") else shown + " "
            rows.append(Completion(insert, shown, hint, kind))
        self._completions[(trigger, word)] = rows
        self.composer.refresh_completions()


async def _as_file(attachment: Attachment) -> str:
    """Files go by path; a pasted image is written to the cache dir first."""
    if attachment.kind == "file":
        return attachment.path
    from portico.paths import paths

    folder = paths().cache_dir / "pasted"
    path = folder / f"{uuid.uuid4().hex[:12]}.png"

    def write() -> None:
        folder.mkdir(parents=True, exist_ok=True)
        path.write_bytes(attachment.data)

    await asyncio.to_thread(write)
    return str(path)
