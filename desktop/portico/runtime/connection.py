"""One connection per server: an owner task holding ``async with Client(...)``.

The owner task enters and leaves the SDK client in one task (anyio cancel scopes demand
it) and walks the state machine of :mod:`portico.runtime.lifecycle`: every failure,
exception groups included, becomes a phase (NeedsAuth, or Failed then Cooldown). Calls
run in the caller's task against the owner's client, so cancelling the caller cancels the
call (the SDK tells the server). Nothing escapes the owner task except a cancellation
from outside, which closes the connection and ends the owner for good (no respawn).

Building the transport lives in :mod:`portico.runtime.transports.factory`, keeping the
lists fresh in :mod:`portico.runtime.list_refresher`.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import itertools
import logging
import ssl
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, Any, TypeVar

from portico.config.masking import is_secret_key, mask_text
from portico.config.model import Protocol, ServerSpec, Transport
from portico.config.secrets import has_references
from portico.runtime import (
    cache_context,
    legacy_tasks,
    roots,
    schema_cache,
    sdklog,
    url_elicitation,
)
from portico.runtime.activity import SANDBOX_LEARNED, SANDBOX_REFUSED, ActivityLog, tapped
from portico.runtime.call_context import CallContext
from portico.runtime.connection_icons import ServerIcons
from portico.runtime.connection_logging import ServerLogging
from portico.runtime.deadlines import LazyDeadlines
from portico.runtime.errors import (
    CONNECTION_CLOSED,
    CallTimeout,
    HttpErrorRecorder,
    HttpErrorResponse,
    NeedsAuth,
    RuntimeFailure,
    SandboxProblem,
    SecretProblem,
    ServerExited,
    describe,
    primary,
)
from portico.runtime.events import (
    AuthRequired,
    EventBus,
    LogLine,
    ResourceUpdated,
    SandboxRefused,
    ServerState,
    Status,
    StatusChanged,
    TaskChanged,
    ToolsChanged,
)
from portico.runtime.filtering import apply_filter
from portico.runtime.hooks import ConnectionHooks, TrustVerdict
from portico.runtime.lifecycle import Lifecycle, Mailbox, Phase, Request
from portico.runtime.list_refresher import KIND_OF_METHOD, ListRefresher, all_pages, handshake_era
from portico.runtime.relisten import EventStreamWatch
from portico.runtime.serverlog import ServerLog
from portico.runtime.session_renewal import (
    RenewalPace,
    describe_renewal,
    forgets_session,
    forgotten,
)
from portico.runtime.task_events import (
    TASKS_EXTENSION,
    TaskGone,
    TaskHandover,
    TaskUpdate,
    TaskWatch,
    offers_tasks,
)

if TYPE_CHECKING:
    from mcp import Client

    from portico.runtime.transports.stdio import StdioProcessInfo

log = logging.getLogger(__name__)
T = TypeVar("T")

# The first retry comes soon (a restarted server is back in seconds); each failure in a
# row doubles the wait up to the cap. Only a connection that stayed up STABLE_AFTER
# seconds starts the doubling again, so a server that crashes right after connecting is
# not reconnected every COOLDOWN_BASE seconds.
COOLDOWN_BASE = 2.0
COOLDOWN_MAX = 600.0
STABLE_AFTER = 60.0
PROGRESS_EXTENSION_CAP = 10.0  # progress may stretch a call to 10x its timeout
STDERR_TAIL_LINES = 10
STOP_GRACE = 10.0
_GENERATIONS = itertools.count(1)  # Connection.generation values
AUTH_PROBE_INTERVAL = 60.0  # how often a server parked in NeedsAuth checks its sign-in
_SCOPE_CANCEL = "Cancelled via cancel scope"  # anyio's message when a cancel scope cancels

SETTLED = frozenset(
    {
        Status.RUNNING,
        Status.FAILED,
        Status.NEEDS_AUTH,
        Status.AWAITING_TRUST,
        Status.REJECTED,
        Status.LAZY,
        Status.COOLDOWN,
        Status.DISABLED,
        Status.STOPPED,
    }
)


class _StopOwner(Exception):
    """Internal: the owner loop should end (stop requested)."""


class _Renew(Exception):
    """Internal: the server forgot the session; the owner starts a new one at once."""


def _from_cancel_scope(exc: asyncio.CancelledError) -> bool:
    """True for a cancellation an anyio cancel scope sent (a transport's), False for
    ``task.cancel()`` from outside (``asyncio.run`` ending, a caller's cancel)."""
    return any(isinstance(arg, str) and arg.startswith(_SCOPE_CANCEL) for arg in exc.args)


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
        self.auth_probe_interval = auth_probe_interval
        self.bus = bus if bus is not None else EventBus()
        self.hooks = hooks if hooks is not None else ConnectionHooks()
        self.cooldown_base = cooldown_base
        self.cooldown_max = cooldown_max
        self.shell_timeout = shell_timeout
        self.client_name = client_name
        self.log = ServerLog(spec.name, on_line=self._on_log_line)
        self.activity = ActivityLog(spec.name, bus=self.bus)  # every message (activity.py)
        # What the server offers (live, or from the schema cache when from_cache).
        self.tools: list[Any] = []
        self.prompts: list[Any] = []
        self.resources: list[Any] = []
        self.resource_templates: list[Any] = []
        self.server_info: Any = None
        self.protocol_version: str | None = None
        self.capabilities: Any = None
        self.instructions: str | None = None
        # Announced icons, once fetched (files in hooks.icon_cache): the server's, per item.
        self.icons = ServerIcons(
            spec,
            self.hooks,
            note=self.note,
            pins=lambda: self._pinned,
            tls=self._icon_tls,
            shown=self._icons_shown,
        )
        self.from_cache = False
        self.connected_at: float | None = None  # time.time() of the last Running
        self.connect_seconds: float | None = None  # how long the last connect took
        # Changes whenever a connected session ends (unique in the process, so a new
        # Connection never repeats one); Allow-for-this-Session approvals bind to it.
        self.generation = next(_GENERATIONS)
        # The owner's state: one phase, one mailbox of requests, one task.
        self._state = ServerState(spec.name, Status.STOPPED)
        self._life = Lifecycle(self._show)
        self._mail = Mailbox()
        self._task: asyncio.Task[None] | None = None
        self._delay = cooldown_base
        self._up_since: float | None = None  # monotonic time of the last connect
        # The live session (None unless Running).
        self._client: Client | None = None
        self._proc: StdioProcessInfo | None = None
        self._transport_ended: asyncio.Event | None = None
        self._refresher: ListRefresher | None = None
        self._list_hints: list[tuple[int, str]] = []  # (ttlMs, cacheScope) per list page
        self._told_private = False  # the log said once that the lists stay off the disk
        self.subscriptions: set[str] = set()  # resource URIs to hear about (kept across reconnects)
        self._pinned: Any = None  # host -> IPs from the trust verdict (policy's DNS pinning)
        self._verdict: TrustVerdict | None = None  # given by a review just answered (once)
        self._tls: ssl.SSLContext | bool | None = None  # the last connect's TLS settings (icons)
        # Calls (recycling watches them; error wording looks at recent HTTP errors).
        self._inflight = 0
        self._activity = asyncio.Event()
        self._last_activity = time.monotonic()
        self._recorder = HttpErrorRecorder()
        self._recorder.on_error = self._heard_error
        self._recorder.on_answer = self._heard_answer
        self._event_streams = EventStreamWatch()  # this session's GET streams (relisten.py)
        self._describe_since = 0
        self._renew = asyncio.Event()  # set: the server forgot this session (session_renewal)
        self._renewals = RenewalPace()
        self.server_logging = ServerLogging(self.log, self.note)  # notifications/message
        # True while the app shuts down: cancelled calls leave their tasks running.
        self.detach_tasks = False
        self._reports: set[asyncio.Future[Any]] = set()  # task updates shown as progress
        self._deadlines = LazyDeadlines()  # the running calls' timeouts (deadlines.py)
        self.url_elicitations = url_elicitation.Completions()  # elicitation/complete heard

    # --- public surface -------------------------------------------------------------

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
        if self._proc is None or self._proc.exited.is_set():
            return None
        return self._proc.pid

    async def start(self) -> None:
        """Spawn the owner task and return at once."""
        if self._task is not None and not self._task.done():
            return
        if not self.spec.enabled:
            self._life.move(Phase.DISABLED)
            return
        self._mail = Mailbox()
        self._life.move(Phase.STARTING)
        self._task = asyncio.create_task(self._owner(), name=f"mcp-owner:{self.name}")

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
        task = self._task
        if task is not None and not task.done():
            self._mail.post(Request.STOP)
            if self._life.phase is not Phase.RUNNING:
                task.cancel()  # parked or connecting: nothing to close gracefully
            try:
                await asyncio.wait_for(asyncio.shield(task), STOP_GRACE)
            except (TimeoutError, asyncio.CancelledError):
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
        self._task = None
        self.log.close()
        if self._life.phase is not Phase.DISABLED:
            self._finish()

    def hurry_stop(self) -> None:
        """Quitting: a stdio server gets a short grace after its stdin closes, then TERM."""
        from portico.runtime.transports.stdio import QUIT_GRACE_SECONDS

        if self._proc is not None:
            self._proc.grace = QUIT_GRACE_SECONDS

    async def restart(self) -> None:
        await self.stop()
        self._delay = self.cooldown_base
        await self.start()

    async def retry_now(self, *, verdict: TrustVerdict | None = None) -> None:
        """Try again at once (resets the cooldown).

        ``verdict``: the trust gate's answer for this very spec, just given by a review
        the person answered (Review trust…): the next attempt starts from it instead of
        asking the gate again. Only a connection about to start or parked for trust
        takes it; a running one goes on as it is.
        """
        self._delay = self.cooldown_base
        if self._task is None or self._task.done():
            self._verdict = verdict
            await self.start()
            return
        if verdict is not None and self._life.phase in (Phase.AWAITING_TRUST, Phase.REJECTED):
            self._verdict = verdict
        self._mail.post(Request.RETRY)

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        context: CallContext | None = None,
        timeout: float | None = None,  # noqa: ASYNC109
    ) -> Any:
        """Call a tool; starts a lazy or recycled server first. Returns CallToolResult.
        ``context``: the caller's (progress, the task the call may become)."""
        client = self._client
        if client is None or self._state.status is not Status.RUNNING:
            client = await self._live_client()
        limit = self.spec.timeout if timeout is None else timeout
        mark = self._begin_call()

        first = [(client, mark)]

        async def call() -> Any:  # again after a URL elicitation: on the session of then
            live, since = (
                first.pop() if first else (await self._live_client(), self._recorder.count)
            )
            try:
                return await self._timed_call(live, name, arguments, context, limit, since)
            except Exception as exc:  # the server forgot the session: once more on a new one
                live, since = await self._renewed(live, since, exc)
                return await self._timed_call(live, name, arguments, context, limit, since)

        async def satisfy(needed: list[Any]) -> None:  # -32042: the person opens a page
            factory = self.hooks.elicitation_callback
            await url_elicitation.satisfy(
                self.name,
                name,
                needed,
                ask=factory(self.spec) if factory is not None else None,
                completions=self.url_elicitations,
                timeout=self.spec.elicitation.timeout,
                note=self.note,
            )

        try:
            with sdklog.bind(self.log):
                return await url_elicitation.calling(call, satisfy)
        finally:
            self._end_call()

    async def _request(self, what: str, send: Callable[[Client], Awaitable[T]]) -> T:
        """One request on the live client, sent once more on a new session when the server
        forgot the old one; failures reworded."""
        client = await self._live_client()
        mark = self._begin_call()
        try:
            try:
                return await send(client)
            except Exception as exc:
                client, mark = await self._renewed(client, mark, exc)
                return await send(client)
        except Exception as exc:
            raise await self._call_failure(exc, what, mark) from exc
        finally:
            self._end_call()

    async def _renewed(self, client: Client, mark: int, exc: Exception) -> tuple[Client, int]:
        """After a failed request: raise ``exc`` unless every error answer since ``mark``
        says the server no longer knows the session (so the request was not processed);
        then have the owner start a new session and return its client and a new mark."""
        stale = forgotten(self._recorder, mark)
        if stale is None:
            raise exc
        if self._client is client and self._life.phase is Phase.RUNNING:
            self._ask_renewal(stale)
        try:
            async with asyncio.timeout(self.spec.connect_timeout + 5.0):
                while self._client is client:  # the owner closes the old session first
                    await self._life.changed()
        except TimeoutError as late:
            raise RuntimeFailure(
                f"{self.name}: the server forgot the session and the old one did not close in time"
            ) from late
        return await self._live_client(), self._recorder.count

    def _heard_error(self, response: HttpErrorResponse) -> None:
        """Every HTTP error answer: one saying the session is gone (the GET stream of a
        restarted server hears it first) makes the owner start a new session."""
        live = self._life.phase is Phase.RUNNING and self._client is not None
        if live and response.method != "DELETE" and forgets_session(response):
            self._ask_renewal(response)

    def _heard_answer(self, response: Any) -> None:
        """Every HTTP answer: a session's event stream opened again without resuming
        missed what the server sent meanwhile, so the lists are fetched again."""
        refresher = self._refresher
        if self._event_streams.reopened(response) and refresher is not None:
            self.note("the server's event stream was opened again; fetching the lists again")
            refresher.caught_up(self.capabilities)

    def _ask_renewal(self, why: HttpErrorResponse) -> None:
        if not self._renew.is_set():
            self.note(describe_renewal(why))
            self._renew.set()

    async def _timed_call(
        self,
        client: Client,
        name: str,
        arguments: dict[str, Any] | None,
        context: CallContext | None,
        limit: float,
        mark: int,
    ) -> Any:
        report = context.progress if context is not None else None
        loop = asyncio.get_running_loop()
        hard_stop = loop.time() + limit * PROGRESS_EXTENSION_CAP
        try:
            async with asyncio.timeout(None) as deadline:  # armed if the call runs on
                self._deadlines.add(deadline, loop.time() + limit)

                async def on_progress(
                    progress: float, total: float | None, message: str | None
                ) -> None:
                    deadline.reschedule(min(loop.time() + limit, hard_stop))
                    if report is not None:
                        outcome = report(progress, total, message)
                        if asyncio.iscoroutine(outcome):
                            await outcome

                try:
                    try:
                        tool = next((t for t in self.tools if t.name == name), None)
                        if legacy_tasks.requires_task(tool, self.protocol_version):
                            return await legacy_tasks.call_as_task(
                                client, name, arguments or {}, on_progress
                            )
                        return await client.call_tool(
                            name,
                            arguments or {},
                            progress_callback=on_progress,
                            meta=self.server_logging.call_meta(self.protocol_version),
                        )
                    except TaskHandover as handover:  # the call became a task: follow it

                        def alive() -> None:  # a task that answers a poll is alive
                            deadline.reschedule(loop.time() + limit)

                        return await self._follow_handle(client, name, handover, context, alive)
                except Exception as exc:
                    raise await self._call_failure(exc, f"tools/call {name}", mark) from exc
                finally:
                    self._deadlines.discard(deadline)
        except TimeoutError as exc:
            if deadline.expired():
                raise CallTimeout(
                    f"{self.name}: tool {name!r} gave no result within {limit:g} s"
                    " (timeout; progress notifications extend it up to"
                    f" {limit * PROGRESS_EXTENSION_CAP:g} s); the call was cancelled"
                ) from exc
            raise

    async def _follow_handle(
        self,
        client: Client,
        name: str,
        handover: TaskHandover,
        context: CallContext | None,
        alive: Callable[[], None],
    ) -> Any:
        from portico.runtime import tasks

        result = await tasks.follow_handle(
            client.session, self.name, handover, self._task_watch(context, alive)
        )
        if not result.is_error:  # what the SDK does for a result it resolves itself
            await client.session.validate_tool_result(name, result)
        return result

    def _task_watch(self, context: CallContext | None, alive: Callable[[], None]) -> TaskWatch:
        """Publish a call's task updates, show them as the call's progress, and pass
        them to the caller (the chat, Try it)."""
        report = context.progress if context is not None else None
        outer = context.on_task if context is not None else None

        def heard(update: TaskUpdate) -> None:
            self.bus.publish(TaskChanged(self.name, update))
            if report is not None and not update.terminal:  # the call's end says the rest
                outcome = report(float(update.polls), None, update.describe())
                if asyncio.iscoroutine(outcome):
                    pending = asyncio.ensure_future(outcome)
                    self._reports.add(pending)
                    pending.add_done_callback(self._reports.discard)
            if outer is not None:
                outer(update)

        return TaskWatch(heard, alive, lambda: self.detach_tasks)

    async def follow_task(
        self, tool: str, task_id: str, *, context: CallContext | None = None
    ) -> Any:
        """Follow a task this server created earlier (before a restart) to its
        CallToolResult; ``TaskGone`` when the server no longer has it."""
        from portico.runtime import tasks

        client = await self._live_client()
        if not offers_tasks(self.capabilities):
            raise RuntimeFailure(
                f"{self.name} no longer offers tasks ({TASKS_EXTENSION}); the result"
                f" of task {task_id} cannot be fetched"
            )
        mark = self._begin_call()
        try:
            with sdklog.bind(self.log):
                watch = self._task_watch(context, lambda: None)
                return await tasks.follow(client.session, self.name, tool, task_id, watch)
        except TaskGone:
            raise
        except Exception as exc:
            raise await self._call_failure(exc, f"tasks/get {task_id}", mark) from exc
        finally:
            self._end_call()

    async def list_prompts(self) -> list[Any]:
        self.prompts = await self._request(
            "prompts/list", lambda client: all_pages(client.list_prompts, "prompts")
        )
        return self.prompts

    async def get_prompt(self, name: str, arguments: dict[str, str] | None = None) -> Any:
        return await self._request(
            f"prompts/get {name}",
            lambda client: asyncio.wait_for(
                client.get_prompt(name, arguments or {}), self.spec.timeout
            ),
        )

    async def list_resources(self) -> list[Any]:
        self.resources = await self._request(
            "resources/list", lambda client: all_pages(client.list_resources, "resources")
        )
        return self.resources

    async def list_resource_templates(self) -> list[Any]:
        client = await self._live_client()
        mark = self._begin_call()
        try:
            return await all_pages(client.list_resource_templates, "resource_templates")
        except Exception as exc:
            raise await self._call_failure(exc, "resources/templates/list", mark) from exc
        finally:
            self._end_call()

    async def read_resource(self, uri: str) -> Any:
        return await self._request(
            f"resources/read {uri}",
            lambda client: asyncio.wait_for(client.read_resource(uri), self.spec.timeout),
        )

    async def subscribe(self, uri: str) -> None:
        """Hear about changes of ``uri`` (``ResourceUpdated`` events), now and after every
        reconnect: ``subscriptions/listen`` on 2026 sessions, ``resources/subscribe`` on
        handshake-era ones."""
        if uri in self.subscriptions:
            return
        self.subscriptions.add(uri)
        await self._resubscribe(uri, on=True)

    async def unsubscribe(self, uri: str) -> None:
        if uri not in self.subscriptions:
            return
        self.subscriptions.discard(uri)
        await self._resubscribe(uri, on=False)

    async def _resubscribe(self, uri: str, *, on: bool) -> None:
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        client, refresher = self._client, self._refresher
        if client is None or refresher is None or self._life.phase is not Phase.RUNNING:
            return  # applied on the next connect
        if self.protocol_version in MODERN_PROTOCOL_VERSIONS:
            await refresher.relisten()
            return
        caps = self.capabilities
        if caps is None or caps.resources is None or not caps.resources.subscribe:
            return  # the server offers none; asking would only get "method not found"
        mark = self._begin_call()
        try:
            with handshake_era():
                if on:
                    await client.subscribe_resource(uri)
                else:
                    await client.unsubscribe_resource(uri)
        except Exception as exc:
            verb = "resources/subscribe" if on else "resources/unsubscribe"
            raise await self._call_failure(exc, f"{verb} {uri}", mark) from exc
        finally:
            self._end_call()

    def resource_updated(self, uri: str) -> None:
        self.bus.publish(ResourceUpdated(self.name, uri))

    async def announce_roots(self) -> None:
        """The offered roots changed (a reload): tell a live session, which asks again
        (``notifications/roots/list_changed``). A 2026 server asks for roots inside each
        request that needs them, so it always gets the current ones anyway."""
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        client = self._client
        if client is None or self.hooks.list_roots_callback is not None:
            return
        if self.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return
        try:
            with handshake_era():
                await client.send_roots_list_changed()
        except Exception as exc:  # the session went away meanwhile: it lists on reconnect
            self.note(f"could not announce the new roots: {describe(exc)}")
            return
        self.note("the roots changed; told the server (notifications/roots/list_changed)")

    async def refresh_tools(self) -> list[Any]:
        """Re-fetch the tool list from the server (bypassing the SDK's cache)."""
        client = await self._live_client()
        hints: list[tuple[int, str]] = []
        tools = await all_pages(client.list_tools, "tools", hints, cache_mode="refresh")
        self._list_hints = hints + self._list_hints  # the fresh tools page, the others as were
        self._set_tools(tools)
        await self.save_cache()
        return tools

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

    def _set_tools(self, tools: list[Any]) -> None:
        self.tools = list(tools)
        count = self._offered()
        if self._state.tool_count != count:
            self._state = dataclasses.replace(self._state, tool_count=count)
        self.bus.publish(ToolsChanged(self.name, count))
        self.icons.want(self)

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

    async def _icon_tls(self) -> ssl.SSLContext | bool:
        """Icons come from the server's origin, so they use its TLS settings (private CA,
        client certificate): the last connect's, or built now for a lazy server."""
        if self._tls is not None:
            return self._tls
        from portico.runtime.transports.factory import server_tls

        try:
            self._tls = await server_tls(self.spec, self.hooks)
        except RuntimeFailure as exc:  # a bad ca_cert / client_cert, a missing password
            self.note(f"icons use the system's TLS trust: {exc}")
            return True
        return self._tls

    def _offered(self) -> int:
        """The tools models may use: the server's list minus tools.include / exclude."""
        decisions = apply_filter([t.name for t in self.tools], self.spec.tools)
        return sum(1 for d in decisions if d.included)

    def apply_list(self, kind: str, items: list[Any]) -> None:
        """A refreshed list from the server (the list refresher calls this)."""
        if kind == "tools":
            self._set_tools(items)
        elif kind == "prompts":
            self.prompts = list(items)
        elif kind == "resources":
            self.resources = list(items)

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

    # --- the owner task: the state machine's driver -------------------------------------

    async def _owner(self) -> None:
        # The SDK's own log records about this server go to its log, not our stderr.
        sdklog.bind_task(self.log)
        lazy_ok = True  # this pass may park lazily (False once a call wants it live)
        try:
            while not self._mail.has(Request.STOP):
                if self._life.phase is not Phase.STARTING:
                    self._life.move(Phase.STARTING)
                self.log.begin_attempt()
                try:
                    if not await self._gate():
                        continue
                    if lazy_ok and self.spec.lazy and await self._adopt_cache():
                        self._life.move(Phase.LAZY)
                    else:
                        await self._connect_and_serve()  # returns only when recycled
                    await self._until_live()
                    lazy_ok = False
                except _StopOwner:
                    return
                except _Renew:
                    if not self._renewals.allow():
                        await self._fail(
                            "the server forgot its new session again at once (HTTP 404 or 400"
                            " for the session id); reconnecting after the cooldown"
                        )
                        lazy_ok = True
                        continue
                    lazy_ok = False  # a new session now (Starting, Connecting, Running)
                except asyncio.CancelledError as exc:
                    if self._mail.has(Request.STOP) or not _from_cancel_scope(exc):
                        raise  # stop() or a cancel from outside: the owner ends here
                    # A transport's cancel scope leaked out: a failure of this server.
                    task = asyncio.current_task()
                    if task is not None:
                        while task.uncancel():
                            pass
                    await self._fail("connection cancelled by its transport")
                    lazy_ok = True
                except BaseException as exc:
                    if isinstance(exc, KeyboardInterrupt | SystemExit):
                        raise
                    leaf = primary(exc)
                    if isinstance(leaf, NeedsAuth):
                        # Raised by auth_for, or by the auth flow inside the transport
                        # (then it arrives wrapped in an exception group).
                        self.note(f"needs sign-in: {leaf}")
                        self._life.move(Phase.NEEDS_AUTH, error=str(leaf))
                        self.bus.publish(AuthRequired(self.name, str(leaf)))
                        await self._park_for_auth()
                    elif isinstance(leaf, SecretProblem | SandboxProblem):
                        # No retry loop: nothing changes until the secret is stored (or
                        # the person answers about the sandbox).
                        self.note(f"failed: {leaf}")
                        self._life.move(Phase.FAILED, error=str(leaf))
                        await self._wait_for(Request.RETRY)
                    elif (why := await self._sign_in_reason()) is not None:
                        # A URL server without `oauth` that asks for an OAuth sign-in:
                        # park and offer sign-in rather than fail over and over.
                        self.note(f"needs sign-in: {why}")
                        self._life.move(Phase.NEEDS_AUTH, error=why)
                        self.bus.publish(AuthRequired(self.name, why))
                        await self._park_for_auth()
                    else:
                        await self._fail(self._describe(exc))
                    lazy_ok = True
        except _StopOwner:
            return
        except asyncio.CancelledError:
            if not self._mail.has(Request.STOP):
                self.note("the connection's owner task was cancelled; connection closed")
            raise
        finally:
            self._client = None
            self._finish()

    async def _gate(self) -> bool:
        """Run the trust gate; False after parking in AwaitingTrust (the caller loops)."""
        # A review just answered for this spec gave its verdict: no second round trip.
        verdict, self._verdict = self._verdict, None
        if verdict is None:
            if self.hooks.trust_gate is None:
                return True
            verdict = await self.hooks.trust_gate(self.spec, asking=self._reviewing)
        if self._life.phase is Phase.REVIEWING:
            self._life.move(Phase.STARTING)
        self._pinned = verdict.pinned
        if verdict.allowed:
            return True
        reasons = "; ".join(verdict.reasons) or "not trusted yet"
        parked = Phase.REJECTED if verdict.rejected else Phase.AWAITING_TRUST
        self._life.move(parked, error=reasons)
        await self._wait_for(Request.RETRY)
        return False

    def _reviewing(self) -> None:
        """The gate asks the person now: stay in the list as AwaitingTrust meanwhile."""
        if self._life.phase is Phase.STARTING:
            self._life.move(Phase.REVIEWING, error="waiting for your review")

    async def _wait_for(self, wanted: Request, timeout: float | None = None) -> bool:  # noqa: ASYNC109
        """Park until ``wanted`` (True) or ``timeout`` (False); raise _StopOwner on stop.

        Requests posted before parking are dropped, except a lazy server's go-live (a call
        that arrived while a recycled process wound down still gets its connection).
        """
        self._mail.clear(*(r for r in Request if r not in (Request.STOP, Request.GO_LIVE)))
        loop = asyncio.get_running_loop()
        until = None if timeout is None else loop.time() + timeout
        while True:
            left = None if until is None else max(0.0, until - loop.time())
            arrived = await self._mail.wait(left)
            if self._mail.has(Request.STOP):
                raise _StopOwner
            if self._mail.take(wanted):
                return True
            if not arrived:
                return False
            self._mail.clear(*(r for r in Request if r is not Request.STOP))  # not for us

    async def _until_live(self) -> None:
        """Lazy: wait until a call wants the server (retry_now does not start it)."""
        await self._wait_for(Request.GO_LIVE)

    async def _park_for_auth(self) -> None:
        """Wait in NeedsAuth for retry_now / stop, or for a new sign-in.

        A timed self-probe (every ``auth_probe_interval`` s) asks the auth layer for a
        stamp of the stored tokens (``hooks.auth_stamp``: storage only, no network, never
        a browser) and reconnects only once it differs from the stamp of the refused
        sign-in, so the rejected token is not sent again; a login made anywhere (another
        window, ``portico mcp login``) is picked up on its own.
        """
        if self.hooks.auth_stamp is None:
            await self._wait_for(Request.RETRY)
            return
        refused = await self._auth_stamp(None)
        while not await self._wait_for(Request.RETRY, self.auth_probe_interval):
            stamp = await self._auth_stamp(refused)
            if stamp is not None and stamp != refused:  # a logout is no reason to try
                self.note("the stored sign-in changed; connecting again")
                return

    async def _auth_stamp(self, fallback: str | None) -> str | None:
        assert self.hooks.auth_stamp is not None
        try:
            return await self.hooks.auth_stamp(self.spec)
        except Exception as exc:  # a broken keyring: keep waiting, say why
            self.note(f"cannot read the stored sign-in: {describe(exc)}")
            return fallback

    async def _fail(self, message: str) -> None:
        """Failed, then Cooldown for the current delay (doubling up to cooldown_max)."""
        self.note(f"failed: {message}")
        self._life.move(Phase.FAILED, error=message)
        up_since, self._up_since = self._up_since, None
        if up_since is not None and time.monotonic() - up_since >= STABLE_AFTER:
            self._delay = self.cooldown_base
        delay = self._delay
        self._delay = min(self._delay * 2, self.cooldown_max)
        self._life.move(Phase.COOLDOWN, error=message, retry_at=time.time() + delay)
        await self._wait_for(Request.RETRY, delay)

    async def _sign_in_reason(self) -> str | None:
        """Why a URL server without ``oauth`` whose connect ended in a 401 wants a sign-in:
        an OAuth challenge, or (a bare 401) protected-resource metadata at the well-known
        addresses (resource_metadata.py); None when nothing says so."""
        last = self._recorder.last
        if not (
            self.spec.is_remote
            and self.spec.oauth is None
            and self._life.phase is Phase.CONNECTING
            and last is not None
            and self._recorder.count > self._describe_since
            and last.status == 401
        ):
            return None
        how = f"run `portico mcp login {self.name}` or use Sign in in the app."
        if last.oauth_challenge:
            return (
                f"Server '{self.name}' asks for a sign-in (HTTP 401 with an OAuth challenge"
                f" from {self.spec.url}); {how}"
            )
        if last.challenge or not self.spec.url:
            return None  # another scheme (Basic, say): not an OAuth sign-in
        from portico.runtime import resource_metadata

        hook = self.hooks.pinned_addresses
        try:
            found = await resource_metadata.find(
                self.spec.url,
                pins=hook(self.spec) if hook is not None else self._pinned,
                verify=self._tls if self._tls is not None else True,
            )
        except Exception as exc:  # a probe that cannot run leaves the plain failure
            self.note(f"could not look for protected-resource metadata: {describe(exc)}")
            return None
        if found is None:
            return None
        return (
            f"Server '{self.name}' asks for a sign-in (HTTP 401 without a challenge from"
            f" {self.spec.url}; its protected-resource metadata at {found.url} names the"
            f" authorization server {found.authorization_server}); {how}"
        )

    def _describe(self, exc: BaseException) -> str:
        proc = self._proc
        leaf = primary(exc)
        if isinstance(leaf, RuntimeFailure | NeedsAuth):
            return str(leaf)
        if proc is not None and proc.self_exit:
            tail = self.log.stderr_tail(STDERR_TAIL_LINES)
            return str(ServerExited(self.name, proc.returncode, tail))
        return describe(
            exc,
            recorder=self._recorder,
            transport=self.spec.transport.value,
            since=self._describe_since,
        )

    async def _cache_context(self) -> str | None:
        """The authorization context of a private entry; None when it cannot be read."""
        try:
            return await cache_context.authorization_context(self.spec, self.hooks)
        except Exception as exc:
            self.note(f"cannot fingerprint the credentials for the schema cache: {describe(exc)}")
            return None

    async def _adopt_cache(self) -> bool:
        cached = await asyncio.to_thread(schema_cache.load, self.spec)
        if cached is None:
            return False
        if cached.cache_scope == "private" and await self._cache_context() != cached.context:
            self.note(
                "the cached lists are private to other credentials or another sign-in:"
                " starting the server to list them again"
            )
            return False
        if cached.expired() and cached.ttl_ms is not None:
            self.note(
                f"the cached lists are older than the {cached.ttl_ms / 1000:g} s the server"
                " allows: starting it to list them again"
            )
            return False
        self.prompts = cached.prompts
        self.resources = cached.resources
        self.resource_templates = cached.resource_templates
        self.server_info = cached.server_info
        self.protocol_version = cached.protocol_version
        self.capabilities = cached.capabilities
        self.from_cache = True
        self._set_tools(cached.tools)
        return True

    async def _connect_and_serve(self) -> None:
        """Connecting -> Running; returns in Lazy when recycled, raises on any loss."""
        self._life.move(Phase.CONNECTING)
        self._renew = asyncio.Event()
        self._event_streams = EventStreamWatch()
        self._recorder.clear()
        self._describe_since = self._recorder.count
        self._proc = None
        started = time.monotonic()
        async with AsyncExitStack() as stack:
            try:
                async with asyncio.timeout(self.spec.connect_timeout):
                    client = await self._open(stack)
                    self._refresher = refresher = ListRefresher(self, client, self.subscriptions)
                    await self._fetch_lists(client)
            except TimeoutError as exc:
                if self._proc is not None and self._proc.self_exit:
                    raise
                raise RuntimeFailure(
                    f"no answer within connect_timeout = {self.spec.connect_timeout:g} s"
                    " (connect + initialize); raise connect_timeout if the server is slow to start"
                ) from exc
            self._client = client
            self._describe_since = self._recorder.count  # earlier errors were survived
            self.connect_seconds = time.monotonic() - started
            self.connected_at = time.time()
            self.from_cache = False
            await self.save_cache()
            self._up_since = time.monotonic()
            await refresher.listen(self.capabilities, self.protocol_version)
            await refresher.subscribe_all(self.capabilities, self.protocol_version)
            self._life.move(Phase.RUNNING)
            try:
                reason = await self._serve()
            finally:
                self._client = None
                self._refresher = None
                self.generation = next(_GENERATIONS)
                await refresher.close()
            if reason == "recycle":
                # Registered, not running: say so before the (slow) process shutdown.
                self._life.move(Phase.LAZY)
            elif reason == "exited":
                proc = self._proc
                raise ServerExited(
                    self.name,
                    proc.returncode if proc is not None else None,
                    self.log.stderr_tail(STDERR_TAIL_LINES),
                )
            elif reason == "lost":
                raise RuntimeFailure(self._lost_message())
        if reason == "stop":
            raise _StopOwner
        if reason == "renew":
            raise _Renew

    def _lost_message(self) -> str:
        if self.spec.transport is Transport.SSE:
            return (
                f"the SSE stream from {self.spec.url} ended (the server closed it or went"
                " away); reconnecting after the cooldown"
            )
        return f"the connection to {self.spec.url} ended; reconnecting after the cooldown"

    async def _serve(self) -> str:
        """Hold the session until stop, the process exits, the stream ends, or recycling."""
        recycle = self.spec.transport is Transport.STDIO and (
            self.spec.idle_timeout_seconds > 0 or self.spec.max_lifetime_seconds > 0
        )
        if self.spec.is_remote and (
            self.spec.idle_timeout_seconds > 0 or self.spec.max_lifetime_seconds > 0
        ):
            self.note("idle_timeout_seconds / max_lifetime_seconds apply to stdio servers only")
        born = self._last_activity = time.monotonic()
        # Calls wake this loop only when recycling needs to see them (no per-call cost).
        stop = self._mail.stop
        waits: list[asyncio.Event] = [stop, self._renew]
        if recycle:
            waits.append(self._activity)
        ended = self._transport_ended if self._proc is None else None
        if self._proc is not None:
            waits.append(self._proc.exited)
        elif ended is not None:
            waits.append(ended)
        while True:
            if stop.is_set():
                return "stop"
            if self._renew.is_set():
                return "renew"
            if self._proc is not None and self._proc.exited.is_set():
                return "exited"
            if ended is not None and ended.is_set():
                return "lost"
            timeout: float | None = None
            if recycle and self._inflight == 0:
                now = time.monotonic()
                due: list[float] = []
                if self.spec.idle_timeout_seconds > 0:
                    due.append(self._last_activity + self.spec.idle_timeout_seconds)
                if self.spec.max_lifetime_seconds > 0:
                    due.append(born + self.spec.max_lifetime_seconds)
                timeout = min(due) - now
                if timeout <= 0:
                    which = (
                        "max_lifetime_seconds"
                        if self.spec.max_lifetime_seconds > 0
                        and now >= born + self.spec.max_lifetime_seconds
                        else "idle_timeout_seconds"
                    )
                    self.note(f"recycling the server process ({which}); the next call restarts it")
                    return "recycle"
            self._activity.clear()
            waiters = [asyncio.ensure_future(event.wait()) for event in waits]
            try:
                await asyncio.wait(waiters, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for waiter in waiters:
                    waiter.cancel()

    async def _open(self, stack: AsyncExitStack) -> Client:
        from mcp import Client
        from mcp.client.extension import advertise
        from mcp_types import Implementation

        from portico.runtime.tasks import TasksExtension
        from portico.runtime.tool_views import EXTENSION_ID, advertised_settings
        from portico.runtime.transports.factory import build_transport

        spec = self.spec
        built = await build_transport(
            spec,
            hooks=self.hooks,
            stack=stack,
            log=self.log,
            recorder=self._recorder,
            shell_timeout=self.shell_timeout,
            note=self.note,
            pinned=self._pinned,
            remember_secrets=self._remember_secrets,
            watch_http=self.activity.watch_http,
            sandbox_refused=self._sandbox_refused,
        )
        self._proc = built.proc
        self._tls = built.tls
        self._transport_ended = built.transport.ended
        transport = tapped(built.transport, self.activity)
        stack.callback(self.activity.end_pending)  # runs as the session closes
        hooks = self.hooks

        def callback(factory: Any) -> Any:
            return factory(spec) if factory is not None else None

        client = Client(
            transport,
            mode="legacy" if spec.protocol is Protocol.LEGACY else "auto",
            read_timeout_seconds=None,
            sampling_callback=callback(hooks.sampling_callback),
            elicitation_callback=callback(hooks.elicitation_callback),
            list_roots_callback=callback(hooks.list_roots_callback)
            or roots.list_roots_callback(spec, lambda: self.spec),
            logging_callback=callback(hooks.logging_callback) or self.server_logging.heard,
            log_level=self.server_logging.opening(),  # type: ignore[arg-type]  # 2026: per-request opt-in
            message_handler=self._on_message,
            client_info=Implementation(name=self.client_name, version=_version()),
            extensions=[
                TasksExtension(spec.name),  # advertised on 2026-07-28 requests only
                advertise(EXTENSION_ID, advertised_settings()),  # MCP Apps (portico.apps)
            ],
        )
        return await stack.enter_async_context(client)

    async def _fetch_lists(self, client: Client) -> None:
        from mcp import MCPError

        caps = client.server_capabilities
        self.capabilities = caps
        self.server_info = client.server_info
        self.protocol_version = client.protocol_version
        self.instructions = client.instructions
        hints: list[tuple[int, str]] = []
        tools = await all_pages(client.list_tools, "tools", hints) if caps.tools is not None else []
        prompts: list[Any] = []
        resources: list[Any] = []
        templates: list[Any] = []
        try:
            if caps.prompts is not None:
                prompts = await all_pages(client.list_prompts, "prompts", hints)
            if caps.resources is not None:
                resources = await all_pages(client.list_resources, "resources", hints)
                templates = await all_pages(
                    client.list_resource_templates, "resource_templates", hints
                )
        except MCPError as exc:  # a server with broken prompts still offers its tools
            self.note(f"listing prompts/resources failed: {describe(exc)}")
        self.prompts, self.resources, self.resource_templates = prompts, resources, templates
        self._list_hints = hints
        self._set_tools(tools)
        await self.server_logging.ask(client, self.capabilities, self.protocol_version)

    async def set_log_level(self, level: str) -> None:
        """The least severe server log notification to ask for, now and after every
        reconnect (the Log tab's level control); ValueError for an unknown level."""
        live = self._client if self._life.phase is Phase.RUNNING else None
        await self.server_logging.set_level(level, live, self.capabilities, self.protocol_version)

    async def save_cache(self) -> None:
        if not self.hooks.write_schema_cache:
            return
        ttl_ms, scope = schema_cache.freshness(self._list_hints)
        context = await self._cache_context() if scope == "private" else None
        schema = schema_cache.CachedSchema(
            ttl_ms=ttl_ms,
            cache_scope=scope,
            context=context,
            tools=list(self.tools),
            prompts=list(self.prompts),
            resources=list(self.resources),
            resource_templates=list(self.resource_templates),
            server_info=self.server_info,
            protocol_version=self.protocol_version,
            capabilities=self.capabilities,
        )
        try:
            written = await asyncio.to_thread(schema_cache.save, self.spec, schema)
        except OSError as exc:
            self.note(f"cannot write the schema cache: {exc}")
            return
        if written is None and not self._told_private:
            self._told_private = True
            self.note(
                "the server marks its lists private (cacheScope) and Portico cannot tell"
                " its credentials apart: they stay in memory for this session only"
            )

    # --- notifications ----------------------------------------------------------------

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, Exception):
            self.note(f"transport reported: {describe(message)}")
            return
        method = getattr(message, "method", None) or ""
        if method == "notifications/elicitation/complete":
            elicitation_id = getattr(getattr(message, "params", None), "elicitation_id", None)
            self.note(f"the server says the URL elicitation {elicitation_id or ''} completed")
            self.url_elicitations.completed(elicitation_id)
            return
        if method == "notifications/resources/updated":
            from mcp_types.version import MODERN_PROTOCOL_VERSIONS

            uri = str(getattr(getattr(message, "params", None), "uri", "") or "")
            # 2026 sessions hear it on the listen stream (the refresher reports it there).
            if uri in self.subscriptions and self.protocol_version not in MODERN_PROTOCOL_VERSIONS:
                self.resource_updated(uri)
            return
        kind = KIND_OF_METHOD.get(method)
        if kind is not None and self._refresher is not None:
            self._refresher.changed(kind)

    # --- calls --------------------------------------------------------------------------

    def _begin_call(self) -> int:
        self._inflight += 1
        self._last_activity = time.monotonic()
        self._activity.set()
        return self._recorder.count

    def _end_call(self) -> None:
        self._inflight -= 1
        self._last_activity = time.monotonic()
        self._activity.set()

    async def _live_client(self) -> Client:
        """The running client, starting a lazy or recycled server on the way."""
        if self._client is not None and self._state.status is Status.RUNNING:
            return self._client
        if self._task is None or self._task.done():
            if self._life.phase is Phase.DISABLED:
                raise RuntimeFailure(f"{self.name} is disabled in the config")
            raise RuntimeFailure(f"{self.name} is not started")
        try:
            async with asyncio.timeout(self.spec.connect_timeout + 5.0):
                while True:
                    phase = self._life.phase
                    if phase is Phase.RUNNING and self._client is not None:
                        return self._client
                    if phase is Phase.LAZY:
                        self._mail.post(Request.GO_LIVE)
                    elif self._life.settled and phase is not Phase.RUNNING:
                        raise RuntimeFailure(self._not_running(self._state))
                    # Starting / Connecting, or Running while a recycled process winds down.
                    await self._life.changed()
        except TimeoutError as exc:
            raise RuntimeFailure(f"{self.name} did not start in time") from exc

    async def _owner_verdict(self, wait: float = 3.0) -> str | None:
        """The error the owner task records after a lost connection, if any soon."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(wait):
                while self._life.phase in (Phase.RUNNING, Phase.CONNECTING, Phase.STARTING):
                    await self._life.changed()
        if self._state.status in (Status.FAILED, Status.COOLDOWN, Status.NEEDS_AUTH):
            return self._state.error
        return None

    def _not_running(self, state: ServerState) -> str:
        text = f"{self.name} is not running ({state.status.value}"
        if state.error:
            text += f": {state.error}"
        if state.retry_at is not None:
            text += f"; next try at {time.strftime('%H:%M:%S', time.localtime(state.retry_at))}"
        return text + ")"

    async def _call_failure(self, exc: Exception, what: str, mark: int = 0) -> Exception:
        """Reword a failed request; a dead stdio server becomes ServerExited."""
        from mcp import MCPError

        if isinstance(exc, MCPError) and exc.error is not None:
            code = exc.error.code
            proc = self._proc
            if code == CONNECTION_CLOSED and proc is not None:
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(3.0):
                        await proc.exited.wait()
                if proc.exited.is_set() and not proc.closing:
                    return ServerExited(
                        self.name, proc.returncode, self.log.stderr_tail(STDERR_TAIL_LINES)
                    )
            elif (
                code == CONNECTION_CLOSED
                and self.spec.is_remote
                and exc.error.message == "Connection closed"
            ):
                # The transport died; the owner task learns why (an exception group).
                lost = await self._owner_verdict()
                if lost is not None and self._state.status is Status.NEEDS_AUTH:
                    return NeedsAuth(lost)
                if lost is not None:
                    return RuntimeFailure(f"{self.name}: {what}: connection lost: {lost}")
            text = describe(
                exc, recorder=self._recorder, transport=self.spec.transport.value, since=mark
            )
            if text != exc.error.message:
                return RuntimeFailure(f"{self.name}: {what}: {text}")
        return exc


def _version() -> str:
    # The package's own constant: an app bundle may carry no installed metadata, and a
    # server should never be told version "0".
    from portico import __version__

    return __version__
