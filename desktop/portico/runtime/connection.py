"""One connection per server: the owner of its lifecycle, composed of feature parts.

An owner task holds ``async with Client(...)`` and walks the state machine of
:mod:`portico.runtime.lifecycle` (``connection_owner.py``): every failure, exception
groups included, becomes a phase (NeedsAuth, or Failed then Cooldown); nothing escapes it
except a cancellation from outside, which ends the owner for good (no respawn). Calls run
in the caller's task against the owner's client, so cancelling the caller cancels the
call (the SDK tells the server).

The connection holds the phase and the published state, and composes the parts, each
owning its state: the owner task (``connection_owner.py``), the live session's transport
and client (``connection_session.py``), requests on it (``connection_calls.py``), calls
that became tasks (``connection_tasks.py``), what the server offers
(``connection_lists.py``), resource subscriptions (``connection_resources.py``), icons
(``connection_icons.py``) and the server's own log (``connection_logging.py``). Building
the transport lives in :mod:`portico.runtime.transports.factory`, keeping the lists
fresh in :mod:`portico.runtime.list_refresher`.
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

from portico.config.masking import is_secret_key, mask_text
from portico.config.model import ServerSpec
from portico.config.secrets import has_references
from portico.runtime.activity import SANDBOX_LEARNED, SANDBOX_REFUSED, ActivityLog
from portico.runtime.call_context import CallContext
from portico.runtime.connection_calls import Calls, Session
from portico.runtime.connection_icons import ServerIcons
from portico.runtime.connection_lists import ServerLists
from portico.runtime.connection_logging import ServerLogging
from portico.runtime.connection_owner import (
    AUTH_PROBE_INTERVAL,
    COOLDOWN_BASE,
    COOLDOWN_MAX,
    OwnerTask,
)
from portico.runtime.connection_resources import Subscriptions
from portico.runtime.connection_session import Link
from portico.runtime.connection_tasks import CallTasks
from portico.runtime.errors import describe
from portico.runtime.events import (
    EventBus,
    LogLine,
    SandboxRefused,
    ServerState,
    Status,
    StatusChanged,
    ToolsChanged,
)
from portico.runtime.filtering import apply_filter
from portico.runtime.hooks import ConnectionHooks, TrustVerdict
from portico.runtime.lifecycle import Lifecycle, Phase
from portico.runtime.list_refresher import KIND_OF_METHOD
from portico.runtime.serverlog import ServerLog


class Connection:
    """A live (or parked) connection to one MCP server (docs/architecture.md)."""

    def __init__(
        self,
        spec: ServerSpec,
        *,
        bus: EventBus | None = None,
        hooks: ConnectionHooks | None = None,
        cooldown_base: float = COOLDOWN_BASE,
        cooldown_max: float = COOLDOWN_MAX,
        shell_timeout: float = 5.0,
        client_name: str = "portico",
        auth_probe_interval: float = AUTH_PROBE_INTERVAL,
    ) -> None:
        self.spec = spec
        self._known_secrets: list[str] = []  # resolved secret values (see _remember_secrets)
        self.bus = bus if bus is not None else EventBus()
        self.hooks = hooks if hooks is not None else ConnectionHooks()
        self.log = ServerLog(spec.name, on_line=self._on_log_line)
        self.activity = ActivityLog(spec.name, bus=self.bus)  # every message (activity.py)
        # Announced icons, once fetched (files in hooks.icon_cache): the server's, per item.
        self.icons = ServerIcons(
            spec,
            self.hooks,
            note=self.note,
            pins=lambda: self.owner.pinned,
            tls=lambda: self.link.tls(),
            shown=self._icons_shown,
        )
        self._state = ServerState(spec.name, Status.STOPPED)
        self._life = Lifecycle(self._show)  # the phase; the owner task moves it
        self.server_logging = ServerLogging(self.log, self.note)  # notifications/message
        self.link = Link(  # the live session's transport and client
            lambda: self.spec,
            self.hooks,
            self._life,
            log=self.log,
            activity=lambda: self.activity,
            calls=lambda: self.calls,
            offered=self,
            server_logging=self.server_logging,
            pins=lambda: self.owner.pinned,
            note=self.note,
            remember_secrets=self._remember_secrets,
            sandbox_refused=self._sandbox_refused,
            on_message=self._on_message,
            shell_timeout=shell_timeout,
            client_name=client_name,
        )
        self.tasks = CallTasks(spec.name, self.bus)  # calls that became tasks
        session = Session(
            spec=lambda: self.spec,
            life=self._life,
            client=lambda: self.link.client,
            proc=lambda: self.link.proc,
            state=lambda: self._state,
            started=lambda: self.owner.running,
            go_live=lambda: self.owner.go_live(),
            renew=self.link.ask_renewal,
        )
        self.calls = Calls(
            session,
            self,
            self.tasks,
            hooks=self.hooks,
            log=self.log,
            recorder=self.link.recorder,
            server_logging=self.server_logging,
            note=self.note,
        )
        # What the server offers (live, or from the schema cache when from_cache).
        self.lists = ServerLists(
            lambda: self.spec, self.hooks, self.calls, note=self.note, tools_set=self._tools_set
        )
        self.subscriptions = Subscriptions(  # resource URIs to hear about, across reconnects
            spec.name, self.bus, session, self, self.calls, refresher=lambda: self.link.refresher
        )
        self.owner = OwnerTask(  # the owner task: connect, serve, park, reconnect
            lambda: self.spec,
            self.hooks,
            self._life,
            link=self.link,
            lists=self.lists,
            subscriptions=self.subscriptions.uris,
            server_logging=self.server_logging,
            list_owner=self,
            log=self.log,
            bus=self.bus,
            note=self.note,
            finish=self._finish,
            cooldown_base=cooldown_base,
            cooldown_max=cooldown_max,
            auth_probe_interval=auth_probe_interval,
        )

    # --- public surface -------------------------------------------------------------

    @property
    def tools(self) -> list[Any]:
        return self.lists.tools

    @property
    def prompts(self) -> list[Any]:
        return self.lists.prompts

    @property
    def resources(self) -> list[Any]:
        return self.lists.resources

    @property
    def resource_templates(self) -> list[Any]:
        return self.lists.resource_templates

    @property
    def server_info(self) -> Any:
        return self.lists.server_info

    @property
    def protocol_version(self) -> str | None:
        return self.lists.protocol_version

    @property
    def capabilities(self) -> Any:
        return self.lists.capabilities

    @property
    def instructions(self) -> str | None:
        return self.lists.instructions

    @property
    def from_cache(self) -> bool:
        return self.lists.from_cache

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def state(self) -> ServerState:
        return self._state

    @property
    def phase(self) -> Phase:
        return self._life.phase

    @property
    def pid(self) -> int | None:
        """The live stdio process id (None for HTTP or when not running)."""
        proc = self.link.proc
        if proc is None or proc.exited.is_set():
            return None
        return proc.pid

    @property
    def generation(self) -> int:
        """Changes whenever a connected session ends (unique in the process);
        Allow-for-this-Session approvals bind to it."""
        return self.owner.generation

    @property
    def connected_at(self) -> float | None:
        """time.time() of the last Running."""
        return self.owner.connected_at

    @property
    def connect_seconds(self) -> float | None:
        """How long the last connect took."""
        return self.owner.connect_seconds

    async def start(self) -> None:
        """Spawn the owner task and return at once."""
        self.owner.start()

    async def wait_settled(self, timeout: float | None = None) -> ServerState:  # noqa: ASYNC109
        """Until the status is one that stays without outside help (not Connecting)."""

        async def settled() -> None:
            while not self._life.settled:
                await self._life.changed()

        if timeout is None:
            await settled()
        else:
            async with asyncio.timeout(timeout):
                await settled()
        return self._state

    async def stop(self) -> None:
        """Close the session (stdio: close stdin, TERM, KILL) and end the owner task."""
        await self.owner.stop()
        self.log.close()
        if self._life.phase is not Phase.DISABLED:
            self._finish()

    def hurry_stop(self) -> None:
        """Quitting: a stdio server gets a short grace after its stdin closes, then TERM."""
        from portico.runtime.transports.stdio import QUIT_GRACE_SECONDS

        if self.link.proc is not None:
            self.link.proc.grace = QUIT_GRACE_SECONDS

    async def restart(self) -> None:
        await self.stop()
        self.owner.reset_cooldown()
        await self.start()

    async def retry_now(self, *, verdict: TrustVerdict | None = None) -> None:
        """Try again at once (resets the cooldown).

        ``verdict``: the trust gate's answer for this very spec, just given by a review
        the person answered (Review trust…): the next attempt starts from it instead of
        asking the gate again. Only a connection about to start or parked for trust
        takes it; a running one goes on as it is.
        """
        if not self.owner.retry_now(verdict):
            await self.start()

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        context: CallContext | None = None,
        timeout: float | None = None,  # noqa: ASYNC109
    ) -> Any:
        """Call a tool (connection_calls.py); returns CallToolResult."""
        return await self.calls.call_tool(name, arguments, context=context, timeout=timeout)

    async def follow_task(
        self, tool: str, task_id: str, *, context: CallContext | None = None
    ) -> Any:
        """Follow a task this server created earlier (connection_tasks.py)."""
        return await self.calls.follow_task(tool, task_id, context=context)

    async def list_prompts(self) -> list[Any]:
        return await self.lists.list_prompts()

    async def get_prompt(self, name: str, arguments: dict[str, str] | None = None) -> Any:
        return await self.lists.get_prompt(name, arguments)

    async def list_resources(self) -> list[Any]:
        return await self.lists.list_resources()

    async def list_resource_templates(self) -> list[Any]:
        return await self.lists.list_resource_templates()

    async def read_resource(self, uri: str) -> Any:
        return await self.lists.read_resource(uri)

    async def subscribe(self, uri: str) -> None:
        """Hear about changes of ``uri`` (connection_resources.py)."""
        await self.subscriptions.subscribe(uri)

    async def unsubscribe(self, uri: str) -> None:
        await self.subscriptions.unsubscribe(uri)

    async def announce_roots(self) -> None:
        """The offered roots changed (a reload): tell a live session (connection_session)."""
        await self.link.announce_roots()

    # --- status -----------------------------------------------------------------------

    def _show(self, status: Status, error: str | None, retry_at: float | None) -> None:
        """The lifecycle moved to a phase that shows ``status``: publish it (once)."""
        if error:  # a state error is shown everywhere: never a password or a secret in it
            error = mask_text(error, self._known_secrets)
        state = ServerState(
            self.name,
            status,
            error=error,
            retry_at=retry_at,
            tool_count=self._offered(),
            icon=self.icons.path,
            tool_icons=tuple(sorted(self.icons.tools.items())),
        )
        if state == self._state and status is not Status.COOLDOWN:
            return
        self._state = state
        self.bus.publish(StatusChanged(state))

    def _finish(self) -> None:
        """The owner is gone (or never ran): end in Stopped."""
        self.icons.cancel()
        if self._life.phase not in (Phase.IDLE, Phase.STOPPED, Phase.DISABLED, Phase.STOPPING):
            self._life.move(Phase.STOPPING)
        self._life.move(Phase.STOPPED)

    def _remember_secrets(
        self, written: tuple[tuple[str, str], ...], resolved: dict[str, str]
    ) -> None:
        """Values that must never appear in an error or log line of ours: what references
        resolved to, and literal values of secret-bearing keys."""
        for name, text in written:
            value = resolved.get(name)
            if value and (has_references(text) or is_secret_key(name)):
                self._known_secrets.append(value)
                self._known_secrets.extend(part for part in value.split() if len(part) >= 8)

    def _tools_set(self) -> None:
        """The tool list was replaced: count what models may use, publish, fetch icons."""
        count = self._offered()
        if self._state.tool_count != count:
            self._state = dataclasses.replace(self._state, tool_count=count)
        self.bus.publish(ToolsChanged(self.name, count))
        self.icons.want(self.lists)

    def _icons_shown(self, any_found: bool) -> None:
        """The announced icons are fetched: the server list and the chat's tool cards show
        them; the pages re-read the server's lists, icons included."""
        shown = dataclasses.replace(
            self._state,
            icon=self.icons.path,
            tool_icons=tuple(sorted(self.icons.tools.items())),
        )
        if shown != self._state:
            self._state = shown
            self.bus.publish(StatusChanged(shown))
        if any_found:
            self.bus.publish(ToolsChanged(self.name, self._state.tool_count))

    def _offered(self) -> int:
        """The tools models may use: the server's list minus tools.include / exclude."""
        decisions = apply_filter([t.name for t in self.tools], self.spec.tools)
        return sum(1 for d in decisions if d.included)

    def apply_list(self, kind: str, items: list[Any]) -> None:
        """A refreshed list from the server (the list refresher calls this)."""
        self.lists.apply(kind, items)

    def resource_updated(self, uri: str) -> None:
        self.subscriptions.updated(uri)

    async def save_cache(self) -> None:
        await self.lists.save_cache()

    def _on_log_line(self, text: str, stream: str, level: str = "") -> None:
        self.bus.publish(LogLine(self.name, text, stream, level=level))

    def note(self, text: str) -> None:
        """A line of ours about this server (shown in its log, never on our stderr)."""
        self.log.add(mask_text(text, self._known_secrets), "portico")

    def _sandbox_refused(self, host: str, port: int, entry: str) -> None:
        """The sandbox's proxy refused a host (in learn mode: let it through): an entry in
        the server's Activity too."""
        params = {"host": host, "port": port, "allow": entry}
        method = SANDBOX_LEARNED if self.spec.sandbox_learns else SANDBOX_REFUSED
        self.activity.event(method, params)
        if not self.spec.sandbox_learns:
            self.bus.publish(SandboxRefused(self.name, host, port, entry, self.spec))

    async def set_log_level(self, level: str) -> None:
        """The least severe server log notification to ask for, now and after every
        reconnect (the Log tab's level control); ValueError for an unknown level."""
        live = self.link.client if self._life.phase is Phase.RUNNING else None
        await self.server_logging.set_level(level, live, self.capabilities, self.protocol_version)

    # --- notifications ----------------------------------------------------------------

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, Exception):
            self.note(f"transport reported: {describe(message)}")
            return
        method = getattr(message, "method", None) or ""
        if method == "notifications/elicitation/complete":
            elicitation_id = getattr(getattr(message, "params", None), "elicitation_id", None)
            self.note(f"the server says the URL elicitation {elicitation_id or ''} completed")
            self.calls.url_elicitations.completed(elicitation_id)
            return
        if method == "notifications/resources/updated":
            self.subscriptions.heard(message)
            return
        kind = KIND_OF_METHOD.get(method)
        refresher = self.link.refresher
        if kind is not None and refresher is not None:
            refresher.changed(kind)
