"""One connection per server: an owner task holding ``async with Client(...)``.

The owner task enters and leaves the SDK client in one task (anyio cancel scopes demand
it) and turns every failure, exception groups included, into a status: Connecting,
Running, Lazy, NeedsAuth, AwaitingTrust, Failed then Cooldown. Calls run in the caller's
task against the owner's client, so cancelling the caller cancels the call (the SDK tells
the server). Nothing here raises out of the owner task except its own cancellation.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

from portico.config.masking import is_secret_key, mask_text
from portico.config.model import Protocol, Scope, ServerSpec, Transport
from portico.config.secrets import has_references
from portico.paths import PROJECT_DIR_NAME
from portico.runtime import schema_cache, sdklog
from portico.runtime.activity import ActivityLog, tapped
from portico.runtime.errors import (
    CONNECTION_CLOSED,
    CallTimeout,
    ConfigProblem,
    HttpErrorRecorder,
    NeedsAuth,
    RuntimeFailure,
    SecretProblem,
    ServerExited,
    describe,
    primary,
)
from portico.runtime.events import (
    AuthRequired,
    EventBus,
    LogLine,
    ServerState,
    Status,
    StatusChanged,
    ToolsChanged,
)
from portico.runtime.filtering import apply_filter
from portico.runtime.hooks import ConnectionHooks
from portico.runtime.serverlog import ServerLog

log = logging.getLogger(__name__)

COOLDOWN_BASE = 30.0
COOLDOWN_MAX = 600.0
PROGRESS_EXTENSION_CAP = 10.0  # progress may stretch a call to 10x its timeout
STDERR_TAIL_LINES = 10
MAX_SSE_EVENT_BYTES = 10 * 1024 * 1024
STOP_GRACE = 10.0
LIST_CHANGE_QUIET = 0.05  # a burst of list_changed is over after this long without one
LIST_CHANGE_MAX_WAIT = 0.5  # a steady stream still gets a refresh this often
_GENERATIONS = itertools.count(1)  # Connection.generation values
AUTH_PROBE_INTERVAL = 60.0  # how often a server parked in NeedsAuth checks its sign-in

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

ProgressCallback = Callable[[float, float | None, str | None], Awaitable[None] | None]


class _StopOwner(Exception):
    """Internal: the owner loop should end (stop requested)."""


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
        self.tools: list[Any] = []
        self.prompts: list[Any] = []
        self.resources: list[Any] = []
        self.resource_templates: list[Any] = []
        self.server_info: Any = None
        self.protocol_version: str | None = None
        self.capabilities: Any = None
        self.instructions: str | None = None
        self.from_cache = False  # the lists above came from the schema cache
        self.connected_at: float | None = None  # time.time() of the last Running
        self.connect_seconds: float | None = None  # how long the last connect took
        self._state = ServerState(spec.name, Status.STOPPED)
        self._status_changed = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._client: Any = None
        self._wake = asyncio.Event()
        self._stop_event = asyncio.Event()
        self._stop_requested = False
        self._pending_start = False
        self._want_live = False
        self._parked_lazy = False  # recycled or lazy: registered, not running
        self._delay = cooldown_base
        self._inflight = 0
        self._activity = asyncio.Event()
        self._last_activity = time.monotonic()
        self._recorder = HttpErrorRecorder()
        self._proc: Any = None  # transports.stdio.StdioProcessInfo of the live process
        self._refresh_task: asyncio.Task[None] | None = None
        self._refresh_again: set[str] = set()
        self._last_list_change = 0.0  # time.monotonic() of the last list_changed
        self._describe_since = 0
        self._pinned: Any = None  # host -> IPs from the trust verdict (policy's DNS pinning)
        # Changes whenever a connected session ends (unique in the process, so a new
        # Connection never repeats one); Allow-for-this-Session approvals bind to it.
        self.generation = next(_GENERATIONS)

    # --- public surface -------------------------------------------------------------

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def state(self) -> ServerState:
        return self._state

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
            self._publish(Status.DISABLED)
            return
        self._stop_requested = False
        self._stop_event = asyncio.Event()
        self._pending_start = True
        self._task = asyncio.create_task(self._owner(), name=f"mcp-owner:{self.name}")

    async def wait_settled(self, timeout: float | None = None) -> ServerState:  # noqa: ASYNC109
        """Until the status is one that stays without outside help (not Connecting)."""

        async def settled() -> None:
            while self._pending_start or self._state.status not in SETTLED:
                await self._status_changed.wait()

        if timeout is None:
            await settled()
        else:
            async with asyncio.timeout(timeout):
                await settled()
        return self._state

    async def stop(self) -> None:
        """Close the session (stdio: close stdin, TERM, KILL) and end the owner task."""
        self._stop_requested = True
        self._stop_event.set()
        self._wake.set()
        task = self._task
        if task is not None and not task.done():
            if self._state.status is not Status.RUNNING:
                task.cancel()
            try:
                await asyncio.wait_for(asyncio.shield(task), STOP_GRACE)
            except (TimeoutError, asyncio.CancelledError):
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
        self._task = None
        self._pending_start = False
        self.log.close()
        if self._state.status is not Status.DISABLED:
            self._publish(Status.STOPPED)

    async def restart(self) -> None:
        await self.stop()
        self._delay = self.cooldown_base
        self._parked_lazy = False
        self._want_live = False
        await self.start()

    async def retry_now(self) -> None:
        """Try again at once (resets the cooldown)."""
        self._delay = self.cooldown_base
        if self._task is None or self._task.done():
            await self.start()
            return
        self._wake.set()

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        progress: ProgressCallback | None = None,
        timeout: float | None = None,  # noqa: ASYNC109
    ) -> Any:
        """Call a tool; starts a lazy or recycled server first. Returns CallToolResult."""
        client = await self._live_client()
        limit = self.spec.timeout if timeout is None else timeout
        mark = self._begin_call()
        try:
            with sdklog.bind(self.log):
                return await self._timed_call(client, name, arguments, progress, limit, mark)
        finally:
            self._end_call()

    async def _timed_call(
        self,
        client: Any,
        name: str,
        arguments: dict[str, Any] | None,
        progress: ProgressCallback | None,
        limit: float,
        mark: int,
    ) -> Any:
        loop = asyncio.get_running_loop()
        hard_stop = loop.time() + limit * PROGRESS_EXTENSION_CAP
        try:
            async with asyncio.timeout(limit) as deadline:

                async def on_progress(
                    done: float, total: float | None, message: str | None
                ) -> None:
                    deadline.reschedule(min(loop.time() + limit, hard_stop))
                    if progress is not None:
                        outcome = progress(done, total, message)
                        if asyncio.iscoroutine(outcome):
                            await outcome

                try:
                    return await client.call_tool(
                        name, arguments or {}, progress_callback=on_progress
                    )
                except Exception as exc:
                    raise await self._call_failure(exc, f"tools/call {name}", mark) from exc
        except TimeoutError as exc:
            if deadline.expired():
                raise CallTimeout(
                    f"{self.name}: tool {name!r} gave no result within {limit:g} s"
                    " (timeout; progress notifications extend it up to"
                    f" {limit * PROGRESS_EXTENSION_CAP:g} s); the call was cancelled"
                ) from exc
            raise

    async def list_prompts(self) -> list[Any]:
        client = await self._live_client()
        mark = self._begin_call()
        try:
            self.prompts = await self._all_pages(client.list_prompts, "prompts")
            return self.prompts
        except Exception as exc:
            raise await self._call_failure(exc, "prompts/list", mark) from exc
        finally:
            self._end_call()

    async def get_prompt(self, name: str, arguments: dict[str, str] | None = None) -> Any:
        client = await self._live_client()
        mark = self._begin_call()
        try:
            return await asyncio.wait_for(
                client.get_prompt(name, arguments or {}), self.spec.timeout
            )
        except Exception as exc:
            raise await self._call_failure(exc, f"prompts/get {name}", mark) from exc
        finally:
            self._end_call()

    async def list_resources(self) -> list[Any]:
        client = await self._live_client()
        mark = self._begin_call()
        try:
            self.resources = await self._all_pages(client.list_resources, "resources")
            return self.resources
        except Exception as exc:
            raise await self._call_failure(exc, "resources/list", mark) from exc
        finally:
            self._end_call()

    async def read_resource(self, uri: str) -> Any:
        client = await self._live_client()
        mark = self._begin_call()
        try:
            return await asyncio.wait_for(client.read_resource(uri), self.spec.timeout)
        except Exception as exc:
            raise await self._call_failure(exc, f"resources/read {uri}", mark) from exc
        finally:
            self._end_call()

    async def refresh_tools(self) -> list[Any]:
        """Re-fetch the tool list from the server (bypassing the SDK's cache)."""
        client = await self._live_client()
        tools = await self._all_pages(client.list_tools, "tools", cache_mode="refresh")
        self._set_tools(tools)
        await self._save_cache()
        return tools

    # --- status -----------------------------------------------------------------------

    def _publish(
        self, status: Status, *, error: str | None = None, retry_at: float | None = None
    ) -> None:
        if error:  # a state error is shown everywhere: never a password or a secret in it
            error = mask_text(error, self._known_secrets)
        self._state = ServerState(
            self.name, status, error=error, retry_at=retry_at, tool_count=self._offered()
        )
        if status in SETTLED:
            self._pending_start = False
        previous, self._status_changed = self._status_changed, asyncio.Event()
        previous.set()
        self.bus.publish(StatusChanged(self._state))

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
            self._state = ServerState(
                self.name,
                self._state.status,
                error=self._state.error,
                retry_at=self._state.retry_at,
                tool_count=count,
            )
        self.bus.publish(ToolsChanged(self.name, count))

    def _offered(self) -> int:
        """The tools models may use: the server's list minus tools.include / exclude."""
        decisions = apply_filter([t.name for t in self.tools], self.spec.tools)
        return sum(1 for d in decisions if d.included)

    def _on_log_line(self, text: str, stream: str) -> None:
        self.bus.publish(LogLine(self.name, text, stream))

    def note(self, text: str) -> None:
        """A line of ours about this server (shown in its log, never on our stderr)."""
        self.log.add(mask_text(text, self._known_secrets), "portico")

    # --- the owner task -----------------------------------------------------------------

    async def _owner(self) -> None:
        # The SDK's own log records about this server go to its log, not our stderr.
        sdklog.bind_task(self.log)
        try:
            while not self._stop_requested:
                try:
                    await self._attempt()
                except _StopOwner:
                    return
                except asyncio.CancelledError:
                    if self._stop_requested:
                        raise
                    # A cancellation we did not ask for (a transport's cancel scope):
                    # it is a failure of this server, not the end of the owner.
                    task = asyncio.current_task()
                    if task is not None:
                        while task.uncancel():
                            pass
                    await self._failed("connection cancelled by its transport")
                except BaseException as exc:
                    if isinstance(exc, KeyboardInterrupt | SystemExit):
                        raise
                    leaf = primary(exc)
                    if isinstance(leaf, NeedsAuth):
                        # Raised by auth_for, or by the auth flow inside the transport
                        # (then it arrives wrapped in an exception group).
                        self.note(f"needs sign-in: {leaf}")
                        self._publish(Status.NEEDS_AUTH, error=str(leaf))
                        self.bus.publish(AuthRequired(self.name, str(leaf)))
                        await self._park_for_auth()
                        continue
                    if isinstance(leaf, SecretProblem):
                        # No retry loop: nothing changes until the secret is stored.
                        self.note(f"failed: {leaf}")
                        self._publish(Status.FAILED, error=str(leaf))
                        await self._park()
                        continue
                    await self._failed(self._describe(exc))
        finally:
            self._client = None

    async def _park(self) -> None:
        """Wait for retry_now / a lazy start request / stop."""
        self._wake.clear()
        await self._wake.wait()
        if self._stop_requested:
            raise _StopOwner

    async def _park_for_auth(self) -> None:
        """Wait in NeedsAuth for retry_now / stop, or for a new sign-in.

        A timed self-probe (every ``auth_probe_interval`` s) asks the auth layer for a
        stamp of the stored tokens (``hooks.auth_stamp``: storage only, no network, never
        a browser) and reconnects only once it differs from the stamp of the refused
        sign-in, so the rejected token is not sent again; a login made anywhere (another
        window, ``portico mcp login``) is picked up on its own.
        """
        if self.hooks.auth_stamp is None:
            await self._park()
            return
        refused = await self._auth_stamp(None)
        self._wake.clear()
        while not self._wake.is_set():
            try:
                async with asyncio.timeout(self.auth_probe_interval):
                    await self._wake.wait()
            except TimeoutError:
                stamp = await self._auth_stamp(refused)
                if stamp is not None and stamp != refused:  # a logout is no reason to try
                    self.note("the stored sign-in changed; connecting again")
                    break
        if self._stop_requested:
            raise _StopOwner

    async def _auth_stamp(self, fallback: str | None) -> str | None:
        assert self.hooks.auth_stamp is not None
        try:
            return await self.hooks.auth_stamp(self.spec)
        except Exception as exc:  # a broken keyring: keep waiting, say why
            self.note(f"cannot read the stored sign-in: {describe(exc)}")
            return fallback

    async def _failed(self, message: str) -> None:
        self.note(f"failed: {message}")
        self._publish(Status.FAILED, error=message)
        delay = self._delay
        self._delay = min(self._delay * 2, self.cooldown_max)
        self._publish(Status.COOLDOWN, error=message, retry_at=time.time() + delay)
        self._wake.clear()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(delay):
                await self._wake.wait()
        if self._stop_requested:
            raise _StopOwner

    def _describe(self, exc: BaseException) -> str:
        proc = self._proc
        leaf = primary(exc)
        if isinstance(leaf, RuntimeFailure | NeedsAuth):
            return str(leaf)
        if proc is not None and getattr(proc, "self_exit", False):
            tail = self.log.stderr_tail(STDERR_TAIL_LINES)
            return str(ServerExited(self.name, proc.returncode, tail))
        return describe(
            exc,
            recorder=self._recorder,
            transport=self.spec.transport.value,
            since=self._describe_since,
        )

    async def _attempt(self) -> None:
        spec = self.spec
        self.log.begin_attempt()
        if self.hooks.trust_gate is not None:
            verdict = await self.hooks.trust_gate(spec)
            self._pinned = verdict.pinned
            if not verdict.allowed:
                reasons = "; ".join(verdict.reasons) or "not trusted yet"
                parked = Status.REJECTED if verdict.rejected else Status.AWAITING_TRUST
                self._publish(parked, error=reasons)
                await self._park()
                return
        if not self._want_live and (self._parked_lazy or (spec.lazy and await self._adopt_cache())):
            if self._state.status is not Status.LAZY:
                self._publish(Status.LAZY)
            while not self._want_live:
                await self._park()
            return  # loop again, now wanting a live connection
        await self._connect_and_serve()

    async def _adopt_cache(self) -> bool:
        cached = await asyncio.to_thread(schema_cache.load, self.spec)
        if cached is None:
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
        self._publish(Status.CONNECTING)
        self._recorder.clear()
        self._describe_since = self._recorder.count
        self._proc = None
        started = time.monotonic()
        async with AsyncExitStack() as stack:
            try:
                async with asyncio.timeout(self.spec.connect_timeout):
                    client = await self._open(stack)
                    await self._fetch_lists(client)
            except TimeoutError as exc:
                if self._proc is not None and getattr(self._proc, "self_exit", False):
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
            await self._save_cache()
            self._delay = self.cooldown_base
            self._parked_lazy = False
            self._want_live = False
            listener = await self._start_listener(client)
            self._publish(Status.RUNNING)
            try:
                reason = await self._serve()
            finally:
                self._client = None
                self.generation = next(_GENERATIONS)
                if listener is not None:
                    listener.cancel()
                    with contextlib.suppress(BaseException):
                        await listener
                if self._refresh_task is not None:
                    self._refresh_task.cancel()
                    self._refresh_task = None
            if reason == "recycle":
                # Registered, not running: say so before the (slow) process shutdown.
                self._parked_lazy = True
                self._publish(Status.LAZY)
            if reason == "exited":
                proc = self._proc
                raise ServerExited(
                    self.name,
                    proc.returncode if proc is not None else None,
                    self.log.stderr_tail(STDERR_TAIL_LINES),
                )
        if reason == "stop":
            raise _StopOwner

    async def _serve(self) -> str:
        """Hold the session until stop, the process exits, or recycling is due."""
        recycle = self.spec.transport is Transport.STDIO and (
            self.spec.idle_timeout_seconds > 0 or self.spec.max_lifetime_seconds > 0
        )
        if self.spec.is_remote and (
            self.spec.idle_timeout_seconds > 0 or self.spec.max_lifetime_seconds > 0
        ):
            self.note("idle_timeout_seconds / max_lifetime_seconds apply to stdio servers only")
        born = self._last_activity = time.monotonic()
        # Calls wake this loop only when recycling needs to see them (no per-call cost).
        waits: list[asyncio.Event] = [self._stop_event]
        if recycle:
            waits.append(self._activity)
        if self._proc is not None:
            waits.append(self._proc.exited)
        while True:
            if self._stop_event.is_set():
                return "stop"
            if self._proc is not None and self._proc.exited.is_set():
                return "exited"
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

    async def _open(self, stack: AsyncExitStack) -> Any:
        from mcp import Client
        from mcp_types import Implementation

        spec = self.spec
        if spec.transport is Transport.STDIO:
            transport = await self._stdio_transport()
        else:
            transport = await self._http_transport(stack)
        transport = tapped(transport, self.activity)
        hooks = self.hooks

        def callback(factory: Any) -> Any:
            return factory(spec) if factory is not None else None

        client = Client(
            transport,
            mode="legacy" if spec.protocol is Protocol.LEGACY else "auto",
            read_timeout_seconds=None,
            sampling_callback=callback(hooks.sampling_callback),
            elicitation_callback=callback(hooks.elicitation_callback),
            list_roots_callback=callback(hooks.list_roots_callback),
            logging_callback=callback(hooks.logging_callback),
            message_handler=self._on_message,
            client_info=Implementation(name=self.client_name, version=_version()),
        )
        return await stack.enter_async_context(client)

    async def _stdio_transport(self) -> Any:
        from mcp.client.stdio import get_default_environment

        from portico.runtime.shellpath import find_command, login_path_async
        from portico.runtime.transports.resolve import resolve_pairs
        from portico.runtime.transports.stdio import StdioProcessInfo, stdio_transport

        spec = self.spec
        if spec.command is None:
            raise ConfigProblem(f"{spec.source}: {spec.name}: no command to run")
        if spec.identity_header is not None:
            self.note("identity_header ignored: identity headers apply to HTTP servers only")
        environ = self.hooks.environ
        configured = await resolve_pairs(
            spec.env,
            lookup_keyring=self.hooks.lookup_secret,
            environ=environ,
            where=f"{spec.source}: {spec.name}.env",
        )
        self._remember_secrets(spec.env, configured)
        path = await login_path_async(
            environ=environ if environ is not None else os.environ,
            shell_timeout=self.shell_timeout,
        )
        cwd = _checked_cwd(spec)
        search = configured.get("PATH", path)
        command = find_command(spec.command, search, cwd=cwd, server=spec.name)
        env = get_default_environment()
        env["PATH"] = path
        env.update(configured)
        info = StdioProcessInfo()
        self._proc = info
        return stdio_transport(command, list(spec.args), env=env, cwd=cwd, log=self.log, info=info)

    async def _http_transport(self, stack: AsyncExitStack) -> Any:
        from mcp.client.sse import sse_client
        from mcp.client.streamable_http import streamable_http_client

        from portico.runtime.transports.http import build_client, identity_header
        from portico.runtime.transports.proxies import ProxySettings
        from portico.runtime.transports.resolve import resolve_pairs, resolve_text

        spec = self.spec
        if not spec.url:
            raise ConfigProblem(f"{spec.source}: {spec.name}: no url to connect to")
        environ = self.hooks.environ
        headers = await resolve_pairs(
            spec.headers,
            lookup_keyring=self.hooks.lookup_secret,
            environ=environ,
            where=f"{spec.source}: {spec.name}.headers",
        )
        self._remember_secrets(spec.headers, headers)
        profile = self.hooks.active_profile() if self.hooks.active_profile else "default"
        extra, warning = identity_header(spec, headers, profile)
        if warning:
            self.note(warning)
        if extra is not None:
            headers[extra[0]] = extra[1]
        password = None
        if spec.client_cert is not None and spec.client_cert.password:
            password = await resolve_text(
                spec.client_cert.password,
                lookup_keyring=self.hooks.lookup_secret,
                environ=environ,
                where=f"{spec.source}: {spec.name}.client_cert.password",
            )
        auth = None
        if self.hooks.auth_for is not None:
            auth = await self.hooks.auth_for(spec, interactive=False)
        proxies = ProxySettings.from_environ(environ if environ is not None else os.environ)
        client = build_client(
            spec,
            headers=headers,
            proxies=proxies,
            recorder=self._recorder,
            auth=auth,
            cert_password=password,
            pins=(
                self.hooks.pinned_addresses(spec)
                if self.hooks.pinned_addresses is not None
                else getattr(self, "_pinned", None)
            ),
        )
        self.activity.watch_http(client)
        if spec.transport is Transport.SSE:
            # sse_client enters (and closes) the client it gets from the factory.
            def factory(headers: Any = None, timeout: Any = None, auth: Any = None) -> Any:
                return client

            return sse_client(spec.url, httpx_client_factory=factory)
        await stack.enter_async_context(client)
        return streamable_http_client(
            spec.url, http_client=client, max_sse_event_size=MAX_SSE_EVENT_BYTES
        )

    async def _all_pages(self, method: Any, attribute: str, **kwargs: Any) -> list[Any]:
        items: list[Any] = []
        cursor: str | None = None
        for _ in range(1000):
            page = await method(cursor=cursor, **kwargs)
            items.extend(getattr(page, attribute))
            cursor = page.next_cursor
            if not cursor:
                break
        return items

    async def _fetch_lists(self, client: Any) -> None:
        from mcp import MCPError

        caps = client.server_capabilities
        self.capabilities = caps
        self.server_info = client.server_info
        self.protocol_version = client.protocol_version
        self.instructions = client.instructions
        tools = await self._all_pages(client.list_tools, "tools") if caps.tools is not None else []
        prompts: list[Any] = []
        resources: list[Any] = []
        templates: list[Any] = []
        try:
            if caps.prompts is not None:
                prompts = await self._all_pages(client.list_prompts, "prompts")
            if caps.resources is not None:
                resources = await self._all_pages(client.list_resources, "resources")
                templates = await self._all_pages(
                    client.list_resource_templates, "resource_templates"
                )
        except MCPError as exc:  # a server with broken prompts still offers its tools
            self.note(f"listing prompts/resources failed: {describe(exc)}")
        self.prompts, self.resources, self.resource_templates = prompts, resources, templates
        self._set_tools(tools)

    async def _save_cache(self) -> None:
        if not self.hooks.write_schema_cache:
            return
        schema = schema_cache.CachedSchema(
            tools=list(self.tools),
            prompts=list(self.prompts),
            resources=list(self.resources),
            resource_templates=list(self.resource_templates),
            server_info=self.server_info,
            protocol_version=self.protocol_version,
            capabilities=self.capabilities,
        )
        try:
            await asyncio.to_thread(schema_cache.save, self.spec, schema)
        except OSError as exc:
            self.note(f"cannot write the schema cache: {exc}")

    # --- notifications ----------------------------------------------------------------

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, Exception):
            self.note(f"transport reported: {describe(message)}")
            return
        method = getattr(message, "method", None)
        kinds = {
            "notifications/tools/list_changed": "tools",
            "notifications/prompts/list_changed": "prompts",
            "notifications/resources/list_changed": "resources",
        }
        kind = kinds.get(method or "")
        if kind is not None:
            self._schedule_refresh(kind)

    async def _start_listener(self, client: Any) -> asyncio.Task[None] | None:
        """2026 sessions announce list changes only on a ``subscriptions/listen`` stream."""
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        caps = self.capabilities
        if self.protocol_version not in MODERN_PROTOCOL_VERSIONS or caps is None:
            return None
        wanted = {
            "tools_list_changed": bool(caps.tools and caps.tools.list_changed),
            "prompts_list_changed": bool(caps.prompts and caps.prompts.list_changed),
            "resources_list_changed": bool(caps.resources and caps.resources.list_changed),
        }
        if not any(wanted.values()):
            return None

        acked = asyncio.Event()

        async def listen() -> None:
            from mcp.shared.subscriptions import (
                PromptsListChanged,
                ResourcesListChanged,
                ToolsListChanged,
            )

            try:
                async with client.listen(**wanted) as subscription:
                    acked.set()
                    async for event in subscription:
                        if isinstance(event, ToolsListChanged):
                            self._schedule_refresh("tools")
                        elif isinstance(event, PromptsListChanged):
                            self._schedule_refresh("prompts")
                        elif isinstance(event, ResourcesListChanged):
                            self._schedule_refresh("resources")
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the session itself carries on
                self.note(f"list-change subscription ended: {describe(exc)}")
            finally:
                acked.set()

        task = asyncio.create_task(listen(), name=f"mcp-listen:{self.name}")
        # Running only once changes can be heard (a bounded wait: never block the start).
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(5.0):
                await acked.wait()
        return task

    def _schedule_refresh(self, kind: str) -> None:
        """Coalesce list_changed: at most one refresh in flight plus one pending.

        One task per connection does the refreshing. A notification only marks its kind
        as pending; the task waits for the burst to go quiet, takes everything pending,
        refreshes, and loops while more arrived meanwhile (they all make one more round).
        """
        self._refresh_again.add(kind)
        self._last_list_change = time.monotonic()
        if self._refresh_task is None or self._refresh_task.done():
            self._refresh_task = asyncio.create_task(self._refresh_loop())

    async def _burst_quiet(self) -> None:
        """Until no list_changed came for LIST_CHANGE_QUIET s (at most LIST_CHANGE_MAX_WAIT)."""
        give_up = time.monotonic() + LIST_CHANGE_MAX_WAIT
        while True:
            delay = min(self._last_list_change + LIST_CHANGE_QUIET, give_up) - time.monotonic()
            if delay <= 0:
                return
            await asyncio.sleep(delay)

    async def _refresh_loop(self) -> None:
        while self._refresh_again:
            await self._burst_quiet()
            kinds, self._refresh_again = self._refresh_again, set()
            client = self._client
            if client is None:
                return
            try:
                if "tools" in kinds:
                    tools = await self._all_pages(client.list_tools, "tools", cache_mode="refresh")
                    self._set_tools(tools)
                if "prompts" in kinds:
                    self.prompts = await self._all_pages(
                        client.list_prompts, "prompts", cache_mode="refresh"
                    )
                if "resources" in kinds:
                    self.resources = await self._all_pages(
                        client.list_resources, "resources", cache_mode="refresh"
                    )
                await self._save_cache()
            except Exception as exc:
                self.note(f"refreshing {', '.join(sorted(kinds))} failed: {describe(exc)}")

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

    async def _live_client(self) -> Any:
        """The running client, starting a lazy or recycled server on the way."""
        if self._client is not None and self._state.status is Status.RUNNING:
            return self._client
        status = self._state.status
        if self._task is None or self._task.done():
            if status is Status.DISABLED:
                raise RuntimeFailure(f"{self.name} is disabled in the config")
            raise RuntimeFailure(f"{self.name} is not started")
        try:
            async with asyncio.timeout(self.spec.connect_timeout + 5.0):
                while True:
                    state = self._state
                    if state.status is Status.RUNNING and self._client is not None:
                        return self._client
                    if state.status is Status.LAZY:
                        self._want_live = True
                        self._wake.set()
                    elif (
                        state.status in SETTLED
                        and state.status is not Status.RUNNING
                        and not self._pending_start
                    ):
                        raise RuntimeFailure(self._not_running(state))
                    # Connecting, or Running while a recycled process winds down: wait.
                    await self._status_changed.wait()
        except TimeoutError as exc:
            raise RuntimeFailure(f"{self.name} did not start in time") from exc

    async def _owner_verdict(self, wait: float = 3.0) -> str | None:
        """The error the owner task records after a lost connection, if any soon."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(wait):
                while self._state.status in (Status.RUNNING, Status.CONNECTING):
                    await self._status_changed.wait()
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


def _base_folder(spec: ServerSpec) -> tuple[Path, str]:
    """Where an unset or relative ``cwd`` points: (folder, how to say it)."""
    path = spec.source.path
    if spec.source.scope is Scope.PROJECT:
        folder = path.parent
        if folder.name == PROJECT_DIR_NAME:  # <project>/.portico/mcp.toml -> <project>
            folder = folder.parent
        return folder, "the project folder"
    return path.parent, "the folder of the config file"


def _checked_cwd(spec: ServerSpec) -> str | None:
    """The stdio server's working folder.

    Unset: the project folder for project servers, the user's home for global ones.
    Relative: against the project folder (project) or the config file's folder (global).
    """
    base, what = _base_folder(spec)
    if not spec.cwd:
        default = base if spec.source.scope is Scope.PROJECT else Path.home()
        return str(default) if default.is_dir() else None
    given = Path(os.path.expanduser(spec.cwd))
    cwd = given if given.is_absolute() else base / given
    if not cwd.is_dir():
        relative = "" if given.is_absolute() else f" ({spec.cwd!r} taken relative to {what})"
        raise ConfigProblem(
            f"{spec.source}: {spec.name}.cwd: folder {cwd} does not exist{relative};"
            " create it or fix cwd"
        )
    return str(cwd)


def _version() -> str:
    # The package's own constant: an app bundle may carry no installed metadata, and a
    # server should never be told version "0".
    from portico import __version__

    return __version__
