"""The chat pane's runtime side: the ChatHost, its chats and their running turns.

Everything here runs on the runtime loop (beside the hub); the GUI reaches it through
``RuntimeThread.submit`` and gets back frozen :class:`ChatSnapshot` copies. A turn's
events cross to the GUI through one emit function (a queued Qt signal in the app), with
the id of the chat they belong to.

Tool approvals for calls of the chat the window shows are answered inline in the call's
card: :class:`InlinePrompter` wraps the app's Prompter, and a question whose caller is
the visible chat goes to the card of the call it names (``call_id``) instead of a dialog.
Questions from anywhere else (another chat, Try it, a server's sampling, sign-ins) go to
the dialogs.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from portico.chat.context_meter import ContextEstimate
from portico.chat.events import Event, TurnFailed, TurnFinished
from portico.chat.events import Notice as ChatNotice
from portico.chat.message_copies import MessageCopies
from portico.chat.messages import Attachment, ConversationSummary, Message, SearchHit, ToolCall
from portico.chat.settings import ChatSettings
from portico.chat.task_store import ChatTask
from portico.prompts import (
    ApprovalAnswer,
    ApprovalChoice,
    AuthorizeRequest,
    DeviceCodeRequest,
    ElicitationAnswer,
    ElicitationRequest,
    Notice,
    Prompter,
    SamplingAnswer,
    SamplingRequest,
    SpendApprovalRequest,
    ToolApprovalRequest,
    TrustChoice,
    TrustRequest,
    UnsandboxedRequest,
)

if TYPE_CHECKING:
    from portico.chat.conversation import Chat
    from portico.chat.host import ChatHost
    from portico.runtime.results import ToolResult
    from portico.ui.runtime_thread.session import RuntimeSession
    from portico.ui.runtime_thread.view_service import ViewOpened

log = logging.getLogger(__name__)

Emit = Callable[[str, object], None]  # (chat id, event) -> crosses to the GUI


@dataclass(frozen=True)
class InlineApproval:
    """Pane-only event: show this question in the card of ``call_id``."""

    call_id: str
    request: ToolApprovalRequest | SpendApprovalRequest


@dataclass(frozen=True)
class InlineWithdrawn:
    """Pane-only event: the question of ``call_id`` was aborted (turn stopped, timeout)."""

    call_id: str


@dataclass(frozen=True)
class TurnEnded:
    """Pane-only event: the turn's task is over (after TurnFinished / TurnFailed)."""

    busy: bool = False


@dataclass(frozen=True)
class ModelEntry:
    ref: str
    label: str
    vision: bool = False


@dataclass(frozen=True)
class ChatSnapshot:
    id: str
    title: str
    model: str | None
    yolo: bool
    busy: bool
    messages: tuple[Message, ...]
    siblings: dict[str, list[str]] = field(default_factory=dict)
    models: tuple[ModelEntry, ...] = ()
    limits: dict[str, tuple[float, str]] = field(default_factory=dict)  # server: (limit, unit)
    spend: dict[str, float] = field(default_factory=dict)
    tasks: dict[str, ChatTask] = field(default_factory=dict)  # call id -> its task
    tokens: tuple[int, int] = (0, 0)  # (input, output) of every request of the chat
    # (the first message still sent, the line saying what /compact left out before it)
    context_cut: tuple[str, str] | None = None
    cost: float = 0.0  # what the chat's model requests cost (from the price tables)
    currency: str = ""  # of the chat's provider ("" when it has no prices)
    settings: ChatSettings = field(default_factory=ChatSettings)  # the chat's own
    kind: str = ""  # its provider's kind (openai / anthropic; "" without a model)
    project: str = ""  # what it takes from its project (ChatHost.project_line), "" if none


@dataclass(frozen=True)
class ListRow:
    id: str
    title: str
    updated: float
    snippet: str = ""
    message_count: int = 0
    pinned: bool = False
    archived: bool = False


class InlinePrompter:
    """The app's Prompter (the services are built with it): the approval and spend
    questions of a call of the visible chat go to that call's card, named by the
    question's caller and call id; every other question goes to ``inner`` (the dialogs)."""

    def __init__(self, inner: Prompter, emit: Emit) -> None:
        self.inner = inner
        self.emit = emit
        self.visible: str | None = None
        self._waiting: dict[str, asyncio.Future[Any]] = {}

    def answer(self, call_id: str, value: Any) -> bool:
        """The card's answer to the question of ``call_id``; False if none waits."""
        future = self._waiting.get(call_id)
        if future is None or future.done():
            return False
        future.set_result(value)
        return True

    async def _inline(self, request: ToolApprovalRequest | SpendApprovalRequest) -> Any:
        """The card's answer, or None when the question is not for the visible chat."""
        caller, call_id = request.caller, request.call_id
        if caller is None or caller.kind != "chat" or caller.id != self.visible or not call_id:
            return None
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting[call_id] = future
        # The call's ApprovalAsked is already on its way to the pane, ahead of this: the
        # guard tells the call's context before it asks, and the turn's events cross
        # through the same emit.
        self.emit(caller.id, InlineApproval(call_id, request))
        try:
            return await future
        except asyncio.CancelledError:
            self.emit(caller.id, InlineWithdrawn(call_id))
            raise
        finally:
            self._waiting.pop(call_id, None)

    # --- the Prompter protocol --------------------------------------------------------

    async def approve_tool(self, request: ToolApprovalRequest) -> ApprovalAnswer:
        answer = await self._inline(request)
        if answer is None:
            return await self.inner.approve_tool(request)
        if isinstance(answer, ApprovalAnswer):
            return answer
        return ApprovalAnswer(ApprovalChoice(answer))

    async def approve_spend(self, request: SpendApprovalRequest) -> ApprovalChoice:
        answer = await self._inline(request)
        if answer is None:
            return await self.inner.approve_spend(request)
        return answer.choice if isinstance(answer, ApprovalAnswer) else ApprovalChoice(answer)

    async def review_trust(self, request: TrustRequest) -> TrustChoice:
        return await self.inner.review_trust(request)

    async def run_unsandboxed(self, request: UnsandboxedRequest) -> bool:
        return await self.inner.run_unsandboxed(request)

    async def authorize(self, request: AuthorizeRequest) -> str | None:
        return await self.inner.authorize(request)

    async def device_code(self, request: DeviceCodeRequest) -> None:
        await self.inner.device_code(request)

    async def elicit(self, request: ElicitationRequest) -> ElicitationAnswer:
        return await self.inner.elicit(request)

    async def review_sampling(self, request: SamplingRequest) -> SamplingAnswer:
        return await self.inner.review_sampling(request)

    async def notify(self, notice: Notice) -> None:
        await self.inner.notify(notice)


class ChatService:
    def __init__(self, session: RuntimeSession, prompter: InlinePrompter, emit: Emit) -> None:
        """``prompter``: the session's (``RuntimeSession.prompter``), which the services'
        one ToolGuard asks."""
        self.session = session
        self.emit = emit
        self.prompter = prompter
        self.host: ChatHost | None = None
        self.chats: dict[str, Chat] = {}
        self.copies: dict[str, MessageCopies] = {}  # per chat, kept between snapshots
        self.turns: dict[str, asyncio.Task[None]] = {}
        self._unstarted: set[asyncio.Task[None]] = set()  # turns whose task has not run yet

    async def start(self) -> None:
        from portico.chat.host import ChatHost

        if self.host is not None:
            return
        # The services' catalog: the chat and the servers' sampling share one set of
        # providers, configured on every config load.
        self.host = ChatHost(
            self.session.hub,
            self.session.services.guard,
            self.prompter,
            config=self.session.config,
            models=self.session.services.models,
            face="gui",
        )

    def _host(self) -> ChatHost:
        if self.host is None:
            raise RuntimeError("the chat service was not started")
        return self.host

    def apply_config(self) -> None:
        if self.host is not None and self.session.config is not None:
            self.host.apply_config(self.session.config)

    # --- chats ------------------------------------------------------------------------

    def models(self) -> tuple[ModelEntry, ...]:
        host = self._host()
        out = []
        for choice in host.models.choices():
            label = f"{choice.provider} / {choice.model}"
            if choice.vision:
                label += " (vision)"
            out.append(ModelEntry(choice.ref, label, choice.vision))
        return tuple(out)

    def _kind(self, ref: str | None) -> str:
        from portico.chat.providers.errors import ProviderError

        if ref is None:
            return ""
        try:
            models = self._host().models
            return models.spec(models.resolve(ref)[0]).kind
        except ProviderError:
            return ""

    def has_model(self) -> bool:
        return bool(self.host is not None and self.host.models.choices())

    async def new(self, model: str | None = None) -> ChatSnapshot:
        chat = await self._host().new(model)
        self.chats[chat.id] = chat
        return self.snapshot(chat.id)

    async def open(self, conversation_id: str) -> ChatSnapshot:
        chat = self.chats.get(conversation_id)
        if chat is None:
            chat = await self._host().open(conversation_id)
            self.chats[chat.id] = chat
        return self.snapshot(chat.id)

    async def resume_or_new(self) -> ChatSnapshot:
        """The newest conversation if it has no messages yet, else a new one."""
        rows = await self._host().store.list(limit=1, pinned_first=False)
        if rows and rows[0].message_count == 0:
            with contextlib.suppress(Exception):
                return await self.open(rows[0].id)
        return await self.new()

    def show(self, conversation_id: str | None) -> None:
        """The chat the window shows (its approvals go inline)."""
        self.prompter.visible = conversation_id

    def snapshot(self, conversation_id: str) -> ChatSnapshot:
        chat = self.chats[conversation_id]
        # copy-on-write: the messages unchanged since the last snapshot share its copies
        copies = self.copies.setdefault(conversation_id, MessageCopies())
        messages = copies.copies(chat.messages)
        versions = chat.versions()
        siblings = {m.id: list(versions[m.id]) for m in messages if m.id in versions}
        limits: dict[str, tuple[float, str]] = {}
        config = self.session.config
        if config is not None:
            for spec in config.servers:
                if spec.spend_limit:
                    limits[spec.name] = (spec.spend_limit, spec.cost_unit)
        ledger = getattr(chat.context, "spend", None)
        spend = dict(getattr(ledger, "totals", {}) or {})
        return ChatSnapshot(
            id=chat.id,
            title=chat.title,
            model=chat.model,
            yolo=chat.yolo,
            busy=chat.busy,
            messages=messages,
            siblings=siblings,
            models=self.models(),
            limits=limits,
            spend=spend,
            tasks=dict(chat.tasks),
            tokens=chat.tokens,
            cost=chat.cost,
            currency=chat.currency,
            settings=chat.settings,
            kind=self._kind(chat.model),
            context_cut=chat.context_cut,
        )

    async def context_estimate(self, conversation_id: str) -> ContextEstimate | None:
        """What the chat's next request will send, estimated locally (no network)."""
        chat = self.chats.get(conversation_id)
        return None if chat is None else await chat.context_estimate()

    async def rows(self, query: str = "", archived: bool = False) -> list[ListRow]:
        """The list's rows: pinned first, then newest; ``archived``: the archived chats
        only; a ``query`` searches them all."""
        store = self._host().store
        if query:
            hits: list[SearchHit] = await store.search(query)
            seen: dict[str, ListRow] = {}
            for hit in hits:
                if hit.conversation_id not in seen:
                    snippet = hit.snippet.replace("\n", " ")
                    seen[hit.conversation_id] = ListRow(
                        hit.conversation_id, hit.title, hit.updated, snippet
                    )
            return list(seen.values())
        summaries: list[ConversationSummary] = await store.list(archived=archived)
        return [
            ListRow(s.id, s.title, s.updated, "", s.message_count, s.pinned, s.archived)
            for s in summaries
        ]

    async def rename(self, conversation_id: str, title: str) -> None:
        chat = self.chats.get(conversation_id)
        if chat is not None:
            await chat.rename(title)
        else:
            await self._host().store.rename(conversation_id, title)

    async def set_pinned(self, conversation_id: str, pinned: bool) -> None:
        await self._host().store.set_pinned(conversation_id, pinned)

    async def set_archived(self, conversation_id: str, archived: bool) -> None:
        await self._host().store.set_archived(conversation_id, archived)

    async def delete(self, conversation_id: str) -> None:
        """Deleted, restorable (:meth:`restore`) until :meth:`purge`."""
        chat = self.chats.pop(conversation_id, None)
        self.copies.pop(conversation_id, None)
        if chat is not None and chat.busy:
            chat.stop()
        host = self._host()
        host.forget(conversation_id)
        await host.store.flush()  # what the chat still wrote lands before the delete
        await host.store.delete(conversation_id)

    async def restore(self, conversation_id: str) -> None:
        await self._host().store.restore(conversation_id)

    async def purge(self, conversation_id: str) -> bool:
        """The Undo went away: the deleted chat is removed for good."""
        return await self._host().store.purge(conversation_id)

    async def set_model(self, conversation_id: str, ref: str | None) -> ChatSnapshot:
        await self.chats[conversation_id].set_model(ref or None)
        return self.snapshot(conversation_id)

    async def set_settings(self, conversation_id: str, typed: dict[str, str]) -> ChatSnapshot:
        """The settings panel's fields as typed; raises SettingsError naming a bad one."""
        from portico.chat.settings import parse

        chat = self.chats[conversation_id]
        await chat.set_settings(parse(**typed, base=chat.settings))
        return self.snapshot(conversation_id)

    async def project_line(self, conversation_id: str) -> str:
        return await self._host().project_line(self.chats[conversation_id])

    async def compact(self, conversation_id: str, mode: str) -> str:
        """``Chat.compact``: what was left out, in a sentence (ChatError says why not)."""
        return await self.chats[conversation_id].compact(mode)

    async def set_yolo(self, conversation_id: str, on: bool) -> None:
        await self.chats[conversation_id].set_yolo(on)

    async def switch_to(self, conversation_id: str, message_id: str) -> ChatSnapshot:
        await self.chats[conversation_id].switch_to(message_id)
        return self.snapshot(conversation_id)

    def completions(self, conversation_id: str, text: str) -> list[str]:
        chat = self.chats.get(conversation_id)
        if chat is None:
            return []
        if text.startswith("/call "):
            typed = text.removeprefix("/call ").strip()
            tools = self.session.hub.registry.tools()
            return sorted(
                f"/call {t.qualified}"
                for t in tools
                if t.for_model and t.qualified.startswith(typed)
            )
        try:
            return list(chat.completions(text))
        except Exception:
            log.exception("completions for %r failed", text)
            return []

    async def resource_completions(self) -> list[tuple[str, str, str, bool]]:
        """(server, uri or URI template, name, is a template) for every resource the
        running servers listed, as the chat's ``@`` offers them."""
        out: list[tuple[str, str, str, bool]] = []
        hub = self.session.hub
        for state in hub.states():
            connection = hub.connection(state.name)
            for resource in getattr(connection, "resources", None) or []:
                name = getattr(resource, "title", None) or getattr(resource, "name", "") or ""
                out.append((state.name, str(resource.uri), name, False))
            for template in getattr(connection, "resource_templates", None) or []:
                name = getattr(template, "title", None) or getattr(template, "name", "") or ""
                out.append((state.name, str(template.uri_template), name, True))
        return out

    async def prompt_completions(self) -> list[tuple[str, str]]:
        """(``/server:prompt``, argument hints) for every prompt of every running server."""
        out: list[tuple[str, str]] = []
        hub = self.session.hub
        for state in hub.states():
            connection = hub.connection(state.name)
            prompts = getattr(connection, "prompts", None)
            if not prompts:
                continue
            for prompt in prompts:
                args = getattr(prompt, "arguments", None) or []
                hint = ", ".join(
                    f"{a.name}{' (required)' if getattr(a, 'required', False) else ''}"
                    for a in args
                )
                out.append((f"/{state.name}:{prompt.name}", hint))
        return out

    # --- turns ------------------------------------------------------------------------

    def start_turn(self, conversation_id: str, kind: str, *args: Any) -> None:
        """Run a turn (``send``, ``retry``, ``edit``, ``regenerate``) in a task; its events
        go to ``emit``. Raises ChatBusy (from the core) when one already runs."""
        chat = self.chats[conversation_id]
        if conversation_id in self.turns and not self.turns[conversation_id].done():
            from portico.chat.conversation import ChatBusy

            raise ChatBusy("a turn is already running in this chat; stop it first")
        events: AsyncIterator[Event] = getattr(chat, kind)(*args)
        given = chat.view_context
        task = asyncio.get_running_loop().create_task(self._drive(conversation_id, events, given))
        self.turns[conversation_id] = task
        self._unstarted.add(task)

    async def _drive(
        self, conversation_id: str, events: AsyncIterator[Event], given: str | None = None
    ) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._unstarted.discard(task)
        ended = False
        try:
            async for event in events:
                if isinstance(event, TurnFinished | TurnFailed):
                    ended = True
                self.emit(conversation_id, event)
        except asyncio.CancelledError:
            if not ended:
                self.emit(conversation_id, TurnFinished("", "stopped"))
            raise
        except Exception as exc:
            log.exception("a chat turn failed")
            if not ended:
                self.emit(conversation_id, TurnFailed(f"The turn failed: {exc}", True))
        finally:
            self.turns.pop(conversation_id, None)
            chat = self.chats.get(conversation_id)
            if chat is not None and given is not None and chat.view_context == given:
                chat.view_context = None  # given once; a newer one waits for the next turn
            self.emit(conversation_id, TurnEnded())

    def send(
        self,
        conversation_id: str,
        text: str,
        files: Sequence[str] = (),
        resources: Sequence[tuple[str, str]] = (),
    ) -> None:
        """``resources``: (server, uri) chosen with ``@``, read by the turn."""
        attachments = [Attachment("file", Path(p).name, path=Path(p)) for p in files]
        attachments += [Attachment("resource", u, server=s, uri=u) for s, u in resources]
        self.start_turn(conversation_id, "send", text, attachments)

    def stop(self, conversation_id: str) -> bool:
        chat = self.chats.get(conversation_id)
        stopped = chat.stop() if chat is not None else False
        task = self.turns.get(conversation_id)
        if not stopped and task is not None and not task.done():
            task.cancel()
            stopped = True
            if task in self._unstarted:  # a task cancelled before it runs never says so
                self._unstarted.discard(task)
                self.turns.pop(conversation_id, None)
                self.emit(conversation_id, TurnFinished("", "stopped"))
                self.emit(conversation_id, TurnEnded())
        return stopped

    def cancel_call(self, conversation_id: str, call_id: str) -> bool:
        """Cancel one running tool call; the turn goes on (False: it is not running)."""
        chat = self.chats.get(conversation_id)
        return chat.cancel_call(call_id) if chat is not None else False

    def answer(self, call_id: str, value: Any) -> bool:
        return self.prompter.answer(call_id, value)

    # --- views ------------------------------------------------------------------------

    def view_of(self, qualified: str) -> str | None:
        """The ``ui://`` view of a tool's results, or None (also for unknown tools)."""
        return self.host.view_of(qualified) if self.host is not None else None

    async def open_view(
        self,
        conversation_id: str,
        qualified: str,
        arguments: dict[str, Any],
        result: ToolResult,
        deliver: Callable[[str], None],
        *,
        theme: str = "light",
        on_display_mode: Callable[[str], None] | None = None,
    ) -> ViewOpened:
        """A view under a card of this chat: its tool calls spend this chat's budget and
        use its session approvals; its ``ui/message`` is the person's next message here
        and its model context goes into this chat's next turn."""
        chat = self.chats[conversation_id]
        opened: ViewOpened = await self.session.pages.views.open(
            qualified,
            arguments,
            result,
            deliver,
            theme=theme,
            chat=chat.context,
            on_message=lambda text: self._view_message(conversation_id, text),
            on_display_mode=on_display_mode,
            on_model_context=lambda ctx: self._view_context(conversation_id, qualified, ctx),
        )
        return opened

    def _view_message(self, conversation_id: str, text: str) -> None:
        if conversation_id not in self.chats:
            return
        try:
            self.send(conversation_id, text)
        except Exception as exc:  # ChatBusy: a turn runs; the person is told
            self.emit(
                conversation_id, ChatNotice(f"A view's message was not sent: {exc}", "warning")
            )

    def _view_context(self, conversation_id: str, qualified: str, context: dict[str, Any]) -> None:
        chat = self.chats.get(conversation_id)
        if chat is None:
            return
        chat.view_context = _context_text(context)
        self.emit(
            conversation_id,
            ChatNotice(f"The view of {qualified} updated the context the model gets next turn."),
        )

    async def fetch_task(self, conversation_id: str, call_id: str) -> ToolCall:
        """Fetch the result of a call's task (one left running when Portico closed)."""
        record = await self._host().fetch_task(conversation_id, call_id)
        return copy.deepcopy(record)

    async def close(self) -> None:
        self.session.hub.detach_tasks()  # cancelled turns leave their tasks running
        for task in list(self.turns.values()):
            task.cancel()
        for task in list(self.turns.values()):
            with contextlib.suppress(BaseException):
                await task
        if self.host is not None:
            await self.host.close()


def _context_text(context: dict[str, Any]) -> str:
    """A view's model context as the model reads it: its text blocks, then its
    structured content as JSON."""
    parts: list[str] = []
    content = context.get("content")
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text":
                parts.append(str(block.get("text", "")))
    if "structuredContent" in context:
        parts.append(json.dumps(context["structuredContent"], ensure_ascii=False, default=str))
    return "\n".join(p for p in parts if p)
