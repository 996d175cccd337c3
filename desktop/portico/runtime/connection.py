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
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, Any, TypeVar

from portico.config.masking import is_secret_key, mask_text
from portico.config.model import Protocol, ServerSpec, Transport
from portico.config.secrets import has_references
from portico.runtime import (
    roots,
    sdklog,
)
from portico.runtime.activity import SANDBOX_LEARNED, SANDBOX_REFUSED, ActivityLog, tapped
from portico.runtime.call_context import CallContext
from portico.runtime.connection_calls import STDERR_TAIL_LINES, Calls, Session
from portico.runtime.connection_icons import ServerIcons
from portico.runtime.connection_lists import ServerLists
from portico.runtime.connection_logging import ServerLogging
from portico.runtime.connection_resources import Subscriptions
from portico.runtime.connection_tasks import CallTasks
from portico.runtime.errors import (
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
    SandboxRefused,
    ServerState,
    Status,
    StatusChanged,
    ToolsChanged,
)
from portico.runtime.filtering import apply_filter
from portico.runtime.hooks import ConnectionHooks, TrustVerdict
from portico.runtime.lifecycle import Lifecycle, Mailbox, Phase, Request
from portico.runtime.list_refresher import KIND_OF_METHOD, ListRefresher, handshake_era
from portico.runtime.relisten import EventStreamWatch
from portico.runtime.serverlog import ServerLog
from portico.runtime.session_renewal import (
    RenewalPace,
    describe_renewal,
    forgets_session,
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
        # Announced icons, once fetched (files in hooks.icon_cache): the server's, per item.
        self.icons = ServerIcons(
            spec,
            self.hooks,
            note=self.note,
            pins=lambda: self._pinned,
            tls=self._icon_tls,
            shown=self._icons_shown,
        )
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
        self._pinned: Any = None  # host -> IPs from the trust verdict (policy's DNS pinning)
        self._verdict: TrustVerdict | None = None  # given by a review just answered (once)
        self._tls: ssl.SSLContext | bool | None = None  # the last connect's TLS settings (icons)
        # Error wording and session renewal look at the HTTP errors heard.
        self._recorder = HttpErrorRecorder()
        self._recorder.on_error = self._heard_error
        self._recorder.on_answer = self._heard_answer
        self._event_streams = EventStreamWatch()  # this session's GET streams (relisten.py)
        self._describe_since = 0
        self._renew = asyncio.Event()  # set: the server forgot this session (session_renewal)
        self._renewals = RenewalPace()
        self.server_logging = ServerLogging(self.log, self.note)  # notifications/message
        self.tasks = CallTasks(spec.name, self.bus)  # calls that became tasks
        session = Session(
            spec=lambda: self.spec,
            life=self._life,
            client=lambda: self._client,
            proc=lambda: self._proc,
            state=lambda: self._state,
            started=lambda: self._task is not None and not self._task.done(),
            go_live=lambda: self._mail.post(Request.GO_LIVE),
            renew=self._ask_renewal,
        )
        self.calls = Calls(
            session,
            self,
            self.tasks,
            hooks=self.hooks,
            log=self.log,
            recorder=self._recorder,
            server_logging=self.server_logging,
            note=self.note,
        )
        # What the server offers (live, or from the schema cache when from_cache).
        self.lists = ServerLists(
            lambda: self.spec, self.hooks, self.calls, note=self.note, tools_set=self._tools_set
        )
        self.subscriptions = Subscriptions(  # resource URIs to hear about, across reconnects
            spec.name, self.bus, session, self, self.calls, refresher=lambda: self._refresher
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
                    if lazy_ok and self.spec.lazy and await self.lists.adopt_cache():
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
                    self._refresher = refresher = ListRefresher(
                        self, client, self.subscriptions.uris
                    )
                    await self.lists.fetch(client)
                    caps, version = self.lists.capabilities, self.lists.protocol_version
                    await self.server_logging.ask(client, caps, version)
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
            self.lists.from_cache = False
            await self.lists.save_cache()
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
        born = self.calls.last_activity = time.monotonic()
        # Calls wake this loop only when recycling needs to see them (no per-call cost).
        stop = self._mail.stop
        waits: list[asyncio.Event] = [stop, self._renew]
        if recycle:
            waits.append(self.calls.activity)
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
            if recycle and self.calls.inflight == 0:
                now = time.monotonic()
                due: list[float] = []
                if self.spec.idle_timeout_seconds > 0:
                    due.append(self.calls.last_activity + self.spec.idle_timeout_seconds)
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
            self.calls.activity.clear()
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

    async def set_log_level(self, level: str) -> None:
        """The least severe server log notification to ask for, now and after every
        reconnect (the Log tab's level control); ValueError for an unknown level."""
        live = self._client if self._life.phase is Phase.RUNNING else None
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
        if kind is not None and self._refresher is not None:
            self._refresher.changed(kind)


def _version() -> str:
    # The package's own constant: an app bundle may carry no installed metadata, and a
    # server should never be told version "0".
    from portico import __version__

    return __version__
