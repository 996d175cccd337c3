"""``ChatHost``: where conversations come from, wired to the hub, the policy and the store.

One per process, on the loop that runs the hub (the runtime thread in the app). A face
builds it once with its own Prompter::

    hub = services.start_hub(bus)
    host = ChatHost(hub, services.guard, prompter, config=config, models=services.models)
    chat = await host.new()                 # or await host.open(conversation_id)
    async for event in chat.send("hello"):  # render events
        ...

``apply_config`` follows config reloads (providers, default model, settings).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from portico.chat import commands
from portico.chat.attachments import AttachmentError, from_resource
from portico.chat.commands import Face
from portico.chat.conversation import Chat, ChatError
from portico.chat.messages import Attachment, Message, ToolCall
from portico.chat.project import ProjectInstructions
from portico.chat.providers.catalog import ModelCatalog
from portico.chat.store import ChatStore, StoredConversation, StoreError
from portico.chat.task_store import ChatTasks
from portico.config.model import Config, RuntimeSettings
from portico.policy.guard import ChatContext, ToolGuard
from portico.policy.spend import SpendLedger

if TYPE_CHECKING:
    from portico.policy.trust_store import TrustStore
    from portico.prompts import Prompter
    from portico.runtime.hub import Hub
    from portico.runtime.registry import Registry

DEFAULT_MAX_TOOL_ROUNDS = 25


class ChatHost:
    def __init__(
        self,
        hub: Hub,
        guard: ToolGuard,
        prompter: Prompter,
        *,
        config: Config | None = None,
        store: ChatStore | None = None,
        store_path: Path | None = None,
        max_tool_rounds: int = DEFAULT_MAX_TOOL_ROUNDS,
        project: Path | None = None,
        models: ModelCatalog | None = None,
        reload: Callable[[], Awaitable[str]] | None = None,
        model_titles: bool | None = None,
        trust_store: TrustStore | None = None,
        face: Face = "cli",
    ) -> None:
        """``guard``: the process's one ToolGuard (``Services.guard``), every tool call of
        every chat goes through it. ``store``/``store_path``: default
        ``<state dir>/chats.sqlite3``. ``project``: the folder
        ``/reload-mcp`` reads the project config of. ``models``: the catalog that also
        answers sampling (``Services.models``); default a new one from ``config``.
        ``reload``: what ``/reload-mcp`` does (default: read the config, apply it to the
        hub). ``model_titles``: the model writes a title after the first exchange (one
        more request per chat); default: the config's ``chat.model_titles`` (off: the
        title is the first words of the first message, made here). ``trust_store``:
        where the review of the project's instructions is remembered (default: the
        person's trust store). ``face``: which face's ``/help`` the chats answer with."""
        from portico.policy.prompters import NonInteractivePrompter
        from portico.policy.trust_store import TrustStore

        self._hub = hub
        self.face: Face = face
        self._store = store or ChatStore(store_path)
        self.tasks = ChatTasks(self._store)  # calls that became tasks (tasks extension)
        self._owns_models = models is None
        self._models = models or ModelCatalog(config.models if config else None)
        self._reload = reload
        self._project = project
        self._chats: dict[str, Chat] = {}
        self.max_tool_rounds = max_tool_rounds
        self._titles_fixed = model_titles is not None
        self.model_titles = bool(
            model_titles
            if model_titles is not None
            else config and config.settings.chat_model_titles
        )
        self.interactive = not isinstance(prompter, NonInteractivePrompter)
        self.guard = guard
        if config is not None and models is not None:
            self._models.configure(config.models)
        self.settings = config.settings if config is not None else RuntimeSettings()
        self.project_folder = project or (config.project if config is not None else None)
        self.instructions = ProjectInstructions(
            self.project_folder, prompter, trust_store or TrustStore()
        )

    @property
    def store(self) -> ChatStore:
        return self._store

    @property
    def models(self) -> ModelCatalog:
        """The configured providers; also the ModelProvider that answers sampling."""
        return self._models

    @property
    def registry(self) -> Registry:
        return self._hub.registry

    def view_of(self, qualified: str) -> str | None:
        """The ``ui://`` view a tool's results render in, or None (also for unknown tools)."""
        try:
            tool = self._hub.registry.resolve(qualified)
        except LookupError:
            return None
        return tool.view.resource_uri if tool.view is not None else None

    def apply_config(self, config: Config) -> None:
        """Take the providers, default model and settings of a reloaded config."""
        self._models.configure(config.models)
        self.settings = config.settings
        if config.project is not None and config.project != self.project_folder:
            self.project_folder = self.instructions.project = config.project
        if not self._titles_fixed:
            self.model_titles = config.settings.chat_model_titles

    # --- conversations ------------------------------------------------------------
    def _context(self, chat_id: str, stored: StoredConversation) -> ChatContext:
        ledger = SpendLedger()
        for server, total in stored.spend.items():
            ledger.totals[server] = total
        ledger.past_limit.update(stored.past_limit)
        ledger.models.update(stored.model_spend)
        return ChatContext(chat_id=chat_id, spend=ledger, yolo=stored.yolo)

    async def project_line(self, chat: Chat) -> str:
        """What a chat takes from its project, for a face to show: ``Project p:
        instructions on · model claude/x · servers everything``; "" outside a project."""
        from portico.chat.project import INSTRUCTIONS, tool_set_text

        if self.project_folder is None:
            return ""
        found = await self.instructions.current(ask=False)
        if found is None:
            state = f"no {INSTRUCTIONS}"
        elif found.state == "on":
            state = "instructions on"
        else:
            state = "instructions off (reviewed before the next answer, or declined)"
        return (
            f"Project {self.project_folder.name}: {state} · model {chat.model or 'none'} · "
            f"{tool_set_text(self.settings)}"
        )

    async def new(self, model: str | None = None, *, title: str = "") -> Chat:
        """A new conversation (model: ``"P/M"``, default: the configured default)."""
        stored = StoredConversation(id=uuid.uuid4().hex, title=title)
        chat = Chat(self, stored, self._context(stored.id, stored))
        if model is not None:
            await chat.set_model(model)
        elif self.settings.chat_model:  # chat.model (a project's, when you allowed it)
            try:
                await chat.set_model(self.settings.chat_model)
            except ChatError:
                stored.model = self._models.default_ref
        else:
            stored.model = self._models.default_ref
        self._chats[chat.id] = chat
        return chat

    async def open(self, conversation_id: str) -> Chat:
        """Resume a stored conversation: its messages, model, loaded tools and spend
        totals come back. Raises ChatError (plain words) for an unknown or unreadable id;
        a unique id prefix is accepted."""
        held = self._chats.get(conversation_id)
        if held is not None:
            return held
        try:
            await self._store.import_json_once()
            full = await self._store.resolve_id(conversation_id)
            held = self._chats.get(full)
            if held is not None:
                return held
            stored = await self._store.load(full)
        except StoreError as exc:
            raise ChatError(str(exc)) from None
        for message in stored.messages:
            if message.status == "streaming":  # the process died while it streamed
                message.status = "stopped"
                for call in message.tool_calls:
                    if call.outcome is None:
                        call.outcome = "cancelled"
                        call.result_text = "Portico stopped before this call returned."
                        call.is_error = True
                self._store.save_message(stored.id, message)
        chat = Chat(self, stored, self._context(stored.id, stored))
        try:
            chat.tasks = await self.tasks.of_conversation(chat.id)
        except StoreError as exc:
            raise ChatError(str(exc)) from None
        self._chats[chat.id] = chat
        return chat

    async def fetch_task(self, conversation_id: str, call_id: str) -> ToolCall:
        """Follow the task of a call (one left running when Portico closed) to its
        result; the call's record gets the result as if the call had returned it (the
        model reads it on the next turn). ChatError when there is none or it expired."""
        from portico.chat.events import ToolCallTask
        from portico.prompts import Caller
        from portico.runtime import results
        from portico.runtime.call_context import CallContext
        from portico.runtime.task_events import TaskUpdate

        chat = await self.open(conversation_id)
        task = chat.tasks.get(call_id)
        found = [(m, c) for m in chat.messages for c in m.tool_calls if c.id == call_id]
        if task is None or not found:
            raise ChatError(f"the call {call_id} of this chat has no task to fetch")
        message, record = found[0]

        def heard(update: TaskUpdate) -> None:
            event = ToolCallTask(
                call_id, update.server, update.tool, update.task_id, update.status, update.message
            )
            chat.note_task(message.id, event)

        context = CallContext(Caller("chat", chat.id), call_id, on_task=heard)
        try:
            connection = self._hub.connection(task.server)
            raw = await connection.follow_task(task.tool, task.task_id, context=context)
        except Exception as exc:
            raise ChatError(str(exc)) from exc
        result = await results.aprocess_result(raw, self._hub.registry.image_dir)
        record.outcome = "ok"
        record.result_text = result.text()
        record.is_error = result.is_error
        record.result_images = result.image_paths
        seq = message.tool_calls.index(record)
        self._store.save_tool_call(chat.id, message.id, seq, record)
        return record

    async def branch(self, chat: Chat, at_message_id: str | None = None) -> Chat:
        """A new conversation continuing ``chat`` (up to ``at_message_id``, default the
        end): same messages and loaded tools, spend totals shared, ``parent_id`` set."""
        path = chat.messages
        if at_message_id is not None:
            ids = [m.id for m in path]
            if at_message_id not in ids:
                raise ChatError(f"no message {at_message_id} in the shown branch of this chat")
            path = path[: ids.index(at_message_id) + 1]
        new_id = uuid.uuid4().hex
        copies: list[Message] = []
        parent: str | None = None
        for message in path:
            copy = replace(
                message,
                id=uuid.uuid4().hex,
                parent_id=parent,
                tool_calls=[replace(c) for c in message.tool_calls],
                attachments=list(message.attachments),
                rounds=[replace(r, tool_call_ids=list(r.tool_call_ids)) for r in message.rounds],
            )
            copies.append(copy)
            parent = copy.id
        stored = StoredConversation(
            id=new_id,
            title=chat.title,
            model=chat.model,
            parent_id=chat.id,
            leaf_id=parent,
            yolo=chat.yolo,
            active_tools=list(chat.active_tools),
            messages=copies,
            settings=chat.settings.to_json(),
        )
        branched = Chat(self, stored, chat.context.branch(new_id))
        if copies:
            branched._persisted = True
            branched._write_row()
            self._store.save_many(new_id, copies)
        self._chats[new_id] = branched
        return branched

    def forget(self, conversation_id: str) -> None:
        """Drop a conversation from memory (after delete)."""
        self._chats.pop(conversation_id, None)

    async def close(self) -> None:
        """Stop running turns and flush the store. Tasks the stopped calls were
        following stay running on their servers (``fetch_task`` after a restart)."""
        self._hub.detach_tasks()
        for chat in list(self._chats.values()):
            chat.stop()
        await asyncio.sleep(0)
        await self._store.close()
        if self._owns_models:
            await self._models.aclose()

    # --- what commands and the loop need ------------------------------------------
    def server_names(self) -> list[str]:
        return list(self._hub.connections)

    def tool_owner(self, qualified: str) -> tuple[str, str]:
        try:
            tool = self._hub.registry.resolve(qualified)
        except (KeyError, LookupError):
            return "", qualified
        return tool.server, tool.tool

    def _connection(self, server: str) -> Any:
        from portico.runtime.hub import UnknownServer

        try:
            return self._hub.connection(server)
        except UnknownServer as exc:
            raise commands.UsageError(str(exc)) from None

    async def render_prompt(
        self, server: str, name: str, rest: str
    ) -> tuple[str, list[Attachment]]:
        """The prompt's messages as the text of one user message (assistant turns marked),
        its images as attachments."""
        from portico.runtime import results

        conn = self._connection(server)
        try:
            prompts = conn.prompts or await conn.list_prompts()
        except Exception as exc:
            raise commands.UsageError(f"cannot list the prompts of {server}: {exc}") from None
        prompt = next((p for p in prompts if p.name == name), None)
        if prompt is None:
            names = ", ".join(p.name for p in prompts) or "none"
            raise commands.UsageError(f"{server} has no prompt named {name!r} (prompts: {names})")
        arguments = commands.prompt_arguments(server, prompt, rest)
        try:
            raw = await conn.get_prompt(name, arguments or None)
        except Exception as exc:
            raise commands.UsageError(f"/{server}:{name} failed: {exc}") from None
        image_dir = self._hub.registry.image_dir

        def render() -> tuple[str, list[Attachment]]:
            texts: list[str] = []
            found: list[Attachment] = []
            for message in raw.messages:
                part = results.process_block(message.content, image_dir)
                if isinstance(part, results.ImagePart) and part.path is not None:
                    found.append(
                        Attachment("file", part.path.name, path=part.path, mime_type=part.mime_type)
                    )
                    continue
                text = part.render()
                texts.append(text if message.role == "user" else f"[{message.role}] {text}")
            return "\n\n".join(texts), found

        return await asyncio.to_thread(render)

    async def read_resource(self, server: str, uri: str) -> list[Attachment]:
        """The resource as attachments (its text; each image blob as an image)."""
        from portico.runtime import results

        conn = self._connection(server)
        try:
            raw = await conn.read_resource(uri)
        except Exception as exc:
            raise commands.UsageError(f"@{server}:{uri} could not be read: {exc}") from None
        image_dir = self._hub.registry.image_dir

        def convert() -> list[Attachment]:
            return from_resource(server, uri, results.process_resource(raw), image_dir())

        try:
            return await asyncio.to_thread(convert)
        except AttachmentError as exc:
            raise commands.UsageError(f"@{server}:{exc}") from None

    async def reload(self) -> str:
        if self._reload is not None:
            return await self._reload()
        from portico.config import load

        config = await asyncio.to_thread(load, self._project)
        summary = await self._hub.apply(config)
        self.apply_config(config)
        return summary

    def model_listing(self, current: str | None) -> str:
        choices = self._models.choices()
        if not choices:
            return (
                "No model is configured (direct mode). Add one with `portico model add` or "
                "`portico model detect`."
            )
        lines = [f"Model: {current or 'none (direct mode)'}. Configured:"]
        for choice in choices:
            mark = "*" if choice.ref == current else " "
            extra = " (vision)" if choice.vision else ""
            lines.append(f" {mark} {choice.ref}{extra}")
        lines.append("Change it with /model PROVIDER/MODEL (or /model none).")
        return "\n".join(lines)

    def completions(self, text: str) -> list[str]:
        words = text.split(" ")
        last = words[-1] if words else ""
        out: list[str] = []
        if text.startswith("/") and len(words) == 1:
            out += [f"/{b}" for b in commands.BUILTINS]
            for name, conn in self._hub.connections.items():
                out += [f"/{name}:{p.name}" for p in getattr(conn, "prompts", [])]
            return sorted(c for c in out if c.startswith(text))
        if last.startswith("@"):
            for name, conn in self._hub.connections.items():
                out += [f"@{name}:{r.uri}" for r in getattr(conn, "resources", [])]
            return sorted(c for c in out if c.startswith(last))
        return []
