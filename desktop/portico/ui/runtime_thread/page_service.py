"""The server pages' runtime side: everything the pages ask of the hub, policy and config.

Lives on the runtime thread (``RuntimeSession.pages``); every method is a coroutine the
GUI awaits through ``RuntimeThread.submit`` and returns plain data. Tool calls from the
Tools tab go through the policy's ToolGuard in one "direct mode" chat context, so the
approval rules, spend limits and remembered approvals are the same as in a chat.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from portico.policy.guard import ChatContext
from portico.prompts import Caller
from portico.runtime.events import ServerState
from portico.ui.runtime_thread import snapshots
from portico.ui.runtime_thread.snapshots import PromptInfo, ResourceInfo, ServerDetails, ToolInfo

if TYPE_CHECKING:
    from portico.config.model import Config, ServerSpec
    from portico.gateway.endpoint import Endpoint
    from portico.policy.guard import ToolGuard
    from portico.policy.setup import Policy
    from portico.runtime.activity import Exchange
    from portico.runtime.health import HealthSnapshot
    from portico.runtime.hub import Hub
    from portico.runtime.results import ToolResult
    from portico.runtime.task_store import TaskRecord, TaskStore
    from portico.services import Services
    from portico.ui.runtime_thread.clients_service import ClientsSnapshot
    from portico.ui.runtime_thread.view_service import ViewService

log = logging.getLogger(__name__)

DIRECT_CHAT_ID = "direct"
TRY_IT = Caller("try_it")
Progress = Callable[[float, float | None, str | None], None]


@dataclass(frozen=True)
class CallOutcome:
    """A Try it call: the result, and when the policy did not run it, why (for a person)."""

    result: ToolResult
    refusal: str | None = None


def refusal_for_person(text: str) -> str:
    """The guard words its refusals for a model; say the same thing to the person."""
    if text.startswith("The person denied"):
        return "You denied this call, so it was not run."
    if text.startswith("Invalid arguments"):
        return text.split(". Nothing was run")[0] + "."
    first = text.split(". Do not retry")[0].split("; do not retry")[0]
    return first.rstrip(".") + "."


class SessionView(Protocol):
    """What the pages need of the runtime session (``RuntimeSession`` is one)."""

    hub: Hub
    policy: Policy
    services: Services
    config: Config | None
    endpoint: Endpoint | None


class PageService:
    def __init__(self, session: SessionView) -> None:
        self.session = session
        self.hub = session.hub
        self.last_calls: dict[str, float] = {}
        self._chat = ChatContext(chat_id=DIRECT_CHAT_ID)  # Try it's spend and approvals
        self._views: ViewService | None = None
        self._watched: tuple[str, str] | None = None  # the resource on the Resources tab
        self._tasks: TaskStore | None = None  # Try it calls that became tasks

    # --- reading ---------------------------------------------------------------------

    async def details(self, name: str) -> ServerDetails:
        return snapshots.server_details(self.hub, name, self.last_calls)

    async def tools(self, name: str) -> list[ToolInfo]:
        return snapshots.server_tools(self.hub, name)

    async def prompts(self, name: str) -> list[PromptInfo]:
        return await snapshots.server_prompts(self.hub, name)

    async def resources(self, name: str) -> list[ResourceInfo]:
        return await snapshots.server_resources(self.hub, name)

    async def activity(self, name: str, since: int = 0) -> tuple[int, list[Exchange]]:
        """The exchanges added or changed after version ``since``, and the version now."""
        log = self.hub.connection(name).activity
        return log.version, log.entries(since)

    async def export_activity(self, name: str, path: Path) -> int:
        """Write the server's activity as JSON Lines (secrets masked); returns the count."""
        from portico.config.atomic import write_atomic
        from portico.runtime.activity import json_lines

        entries = self.hub.connection(name).activity.snapshot()
        text = json_lines(entries)
        await asyncio.to_thread(write_atomic, path, text, mode=0o600)
        return len(entries)

    async def health(self, name: str) -> HealthSnapshot:
        from portico.runtime.health import process_memory

        conn = self.hub.connection(name)
        memory = await asyncio.to_thread(process_memory, conn.pid)
        return conn.activity.health.snapshot(
            memory_bytes=memory, connect_seconds=conn.connect_seconds
        )

    # --- calling ---------------------------------------------------------------------

    def guard(self) -> ToolGuard:
        """The services' one ToolGuard (the chat's too)."""
        return self.session.services.guard

    async def call_asks(self, qualified: str, arguments: dict[str, Any]) -> bool:
        """Whether a Try it call of ``qualified`` with ``arguments`` would ask the person
        now (an Allow for Session answered earlier lets it through)."""
        return self.guard().would_ask(self._chat, qualified, arguments)

    @property
    def direct_chat(self) -> ChatContext:
        """Try it's chat context: its spend totals and session approvals."""
        return self._chat

    @property
    def views(self) -> ViewService:
        """The shown MCP Apps views (their sessions live here, on the runtime thread)."""
        if self._views is None:
            from portico.ui.runtime_thread.view_service import ViewService

            self._views = ViewService(self)
        return self._views

    async def call_tool(
        self,
        server: str,
        qualified: str,
        arguments: dict[str, Any],
        progress: Progress | None = None,
    ) -> CallOutcome:
        """Call through the ToolGuard (validation, approval, spend) like a chat would.
        ``progress`` is called on this (runtime) thread; the caller hops threads."""
        from portico.policy.guard import Refusal
        from portico.runtime.call_context import CallContext
        from portico.runtime.task_events import TaskUpdate

        self.last_calls[server] = time.time()
        store = self.task_store()
        await store.load()
        seen: list[TaskUpdate] = []

        def heard(update: TaskUpdate) -> None:
            seen.append(update)
            store.heard(update)

        context = CallContext(TRY_IT, progress=progress, on_task=heard)
        result = await self.guard().call(self._chat, qualified, arguments, context=context)
        if seen:
            store.finish(seen[-1].task_id, result.text(), result.is_error)
        if isinstance(result, Refusal):
            return CallOutcome(result, refusal_for_person(result.text()))
        return CallOutcome(result)

    # --- tasks (a Try it call the server answered with a task) --------------------------

    def task_store(self) -> TaskStore:
        if self._tasks is None:
            from portico.runtime.task_store import TaskStore

            self._tasks = TaskStore()
        return self._tasks

    async def task_records(self, server: str) -> list[TaskRecord]:
        """The server's Try it tasks, newest first (from before a restart too)."""
        store = self.task_store()
        await store.load()
        return store.records(server)

    async def fetch_task(
        self, server: str, task_id: str, progress: Progress | None = None
    ) -> ToolResult:
        """Follow a recorded task to its result (it may still be running)."""
        from portico.runtime.call_context import CallContext
        from portico.runtime.results import aprocess_result
        from portico.runtime.task_events import TaskGone

        store = self.task_store()
        await store.load()
        record = store.get(task_id)
        if record is None:
            raise KeyError(f"no recorded task {task_id} of {server}")

        conn = self.hub.connection(server)
        self.last_calls[server] = time.time()
        context = CallContext(TRY_IT, progress=progress, on_task=store.heard)
        try:
            raw = await conn.follow_task(record.tool, task_id, context=context)
        except TaskGone:
            await store.flush()
            raise
        result = await aprocess_result(raw, self.hub.registry.image_dir)
        store.finish(task_id, result.text(), result.is_error)
        return result

    async def forget_task(self, task_id: str) -> None:
        self.task_store().forget(task_id)
        await self.task_store().flush()

    async def get_prompt(self, server: str, prompt: str, arguments: dict[str, str]) -> ToolResult:
        from portico.runtime.results import process_prompt

        conn = self.hub.connection(server)
        self.last_calls[server] = time.time()
        raw = await conn.get_prompt(prompt, arguments or None)
        return process_prompt(raw, self.hub.registry.image_dir)

    async def read_resource(self, server: str, uri: str) -> ToolResult:
        from portico.runtime.results import process_resource

        conn = self.hub.connection(server)
        self.last_calls[server] = time.time()
        return process_resource(await conn.read_resource(uri))

    async def watch_resource(self, server: str | None, uri: str | None) -> None:
        """Subscribe to the resource on show (one at a time, so its updates arrive as
        ``ResourceUpdated``); the one watched before is unsubscribed. ``None`` stops."""
        wanted = (server, uri) if server and uri else None
        if wanted == self._watched:
            return
        before, self._watched = self._watched, wanted
        if before is not None:
            conn = self.hub.connections.get(before[0])
            if conn is not None:
                try:
                    await conn.unsubscribe(before[1])
                except Exception as exc:  # the subscription is gone on our side either way
                    log.info("%s: could not unsubscribe %s: %s", before[0], before[1], exc)
        if wanted is not None:
            await self.hub.connection(wanted[0]).subscribe(wanted[1])

    async def set_log_level(self, server: str, level: str) -> None:
        """Ask the server for log messages at ``level`` and above (the Log tab's level)."""
        await self.hub.connection(server).set_log_level(level)

    # --- config write-back -----------------------------------------------------------

    def _spec(self, name: str) -> ServerSpec:
        conn = self.hub.connections.get(name)
        if conn is not None:
            return conn.spec
        config = self.session.config
        spec = config.server(name) if config is not None else None
        if spec is None:
            raise KeyError(f"no server named {name!r} in the loaded config")
        return spec

    # --- the Clients view (the local endpoint's clients) ------------------------------

    async def clients(self) -> ClientsSnapshot:
        from portico.ui.runtime_thread import clients_service

        return await clients_service.snapshot(self.session.endpoint, self.session.services.secrets)

    async def revoke_client(self, name: str) -> bool:
        from portico.ui.runtime_thread import clients_service

        return await clients_service.revoke(
            self.session.endpoint, self.session.services.secrets, name
        )

    async def set_enabled(self, name: str, enabled: bool) -> Path:
        """Write ``enabled`` into the file that defines ``name``; returns that file."""
        path = self._spec(name).source.path

        def write() -> None:
            from portico.config.document import ConfigDocument

            doc = ConfigDocument.load(path)
            doc.set_enabled(name, enabled)
            doc.save()

        await asyncio.to_thread(write)
        return path

    async def remove(self, name: str) -> Path:
        """Remove ``name`` from the file that defines it; returns that file."""
        path = self._spec(name).source.path

        def write() -> None:
            from portico.config.document import ConfigDocument

            doc = ConfigDocument.load(path)
            doc.remove_server(name)
            doc.save()

        await asyncio.to_thread(write)
        return path

    # --- trust -----------------------------------------------------------------------

    async def review_trust(self, name: str) -> ServerState:
        """Ask the trust review again (also after a Reject); the server goes on from the
        answer (no second trust round trip: a declined review is not asked again)."""
        spec = self._spec(name)
        verdict = await self.session.policy.trust.review(spec)
        return await self.hub.admit(name, spec, verdict)
