"""A connection's feature part: the transport and SDK client of the current session.

The owner task asks :meth:`Link.open` for a client inside its exit stack (the transport
from :mod:`portico.runtime.transports.factory`, tapped for the Activity), holds the
session with :meth:`Link.serve` until it ends (stop, renewal, the process exits, the
stream ends, recycling), and words why a connect failed (:meth:`Link.describe`,
:meth:`Link.sign_in_reason`). The HTTP answers heard on the way decide when the server
forgot the session (``session_renewal.py``) and when the lists must be fetched again.
"""

from __future__ import annotations

import asyncio
import ssl
import time
from collections.abc import Callable
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, Any

from portico.config.model import Protocol, ServerSpec, Transport
from portico.runtime import roots
from portico.runtime.activity import ActivityLog, tapped
from portico.runtime.connection_calls import STDERR_TAIL_LINES, Calls, Offered
from portico.runtime.connection_logging import ServerLogging
from portico.runtime.errors import (
    HttpErrorRecorder,
    HttpErrorResponse,
    NeedsAuth,
    RuntimeFailure,
    ServerExited,
    describe,
    primary,
)
from portico.runtime.hooks import ConnectionHooks
from portico.runtime.lifecycle import Lifecycle, Phase
from portico.runtime.list_refresher import ListRefresher, handshake_era
from portico.runtime.relisten import EventStreamWatch
from portico.runtime.serverlog import ServerLog
from portico.runtime.session_renewal import describe_renewal, forgets_session

if TYPE_CHECKING:
    from mcp import Client
    from mcp.client.session import MessageHandlerFnT

    from portico.runtime.transports.stdio import StdioProcessInfo


class Link:
    """The live session's transport, process and client (None between sessions)."""

    def __init__(
        self,
        spec: Callable[[], ServerSpec],
        hooks: ConnectionHooks,
        life: Lifecycle,
        *,
        log: ServerLog,
        activity: Callable[[], ActivityLog],
        calls: Callable[[], Calls],
        offered: Offered,
        server_logging: ServerLogging,
        pins: Callable[[], Any],
        note: Callable[[str], None],
        remember_secrets: Callable[[tuple[tuple[str, str], ...], dict[str, str]], None],
        sandbox_refused: Callable[[str, int, str], None],
        on_message: MessageHandlerFnT,
        shell_timeout: float,
        client_name: str,
    ) -> None:
        self._spec = spec  # the current spec (a reload may replace it)
        self._hooks = hooks
        self._life = life
        self._log = log
        self._activity = activity  # the hub may hand a new connection an old history
        self._calls = calls
        self._offered = offered
        self._server_logging = server_logging
        self._pins = pins  # host -> IPs from the trust verdict (policy's DNS pinning)
        self._note = note
        self._remember_secrets = remember_secrets
        self._sandbox_refused = sandbox_refused
        self._on_message = on_message
        self._shell_timeout = shell_timeout
        self._client_name = client_name
        # Set by the owner task: the client once the session is up, its list refresher.
        self.client: Client | None = None
        self.refresher: ListRefresher | None = None
        self.proc: StdioProcessInfo | None = None
        self._transport_ended: asyncio.Event | None = None
        self._tls: ssl.SSLContext | bool | None = None  # the last connect's TLS settings
        # Error wording and session renewal look at the HTTP errors heard.
        self.recorder = HttpErrorRecorder()
        self.recorder.on_error = self._heard_error
        self.recorder.on_answer = self._heard_answer
        self._event_streams = EventStreamWatch()  # this session's GET streams (relisten.py)
        self._describe_since = 0
        self._renew = asyncio.Event()  # set: the server forgot this session (session_renewal)

    def begin(self) -> None:
        """A connect starts: forget the last session's errors, streams and process."""
        self._renew = asyncio.Event()
        self._event_streams = EventStreamWatch()
        self.recorder.clear()
        self._describe_since = self.recorder.count
        self.proc = None

    def connected(self, client: Client) -> None:
        """The session is up: errors heard while connecting were survived."""
        self.client = client
        self._describe_since = self.recorder.count

    def ask_renewal(self, why: HttpErrorResponse) -> None:
        if not self._renew.is_set():
            self._note(describe_renewal(why))
            self._renew.set()

    def _heard_error(self, response: HttpErrorResponse) -> None:
        """Every HTTP error answer: one saying the session is gone (the GET stream of a
        restarted server hears it first) makes the owner start a new session."""
        live = self._life.phase is Phase.RUNNING and self.client is not None
        if live and response.method != "DELETE" and forgets_session(response):
            self.ask_renewal(response)

    def _heard_answer(self, response: Any) -> None:
        """Every HTTP answer: a session's event stream opened again without resuming
        missed what the server sent meanwhile, so the lists are fetched again."""
        refresher = self.refresher
        if self._event_streams.reopened(response) and refresher is not None:
            self._note("the server's event stream was opened again; fetching the lists again")
            refresher.caught_up(self._offered.capabilities)

    async def announce_roots(self) -> None:
        """The offered roots changed (a reload): tell a live session, which asks again
        (``notifications/roots/list_changed``). A 2026 server asks for roots inside each
        request that needs them, so it always gets the current ones anyway."""
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        client = self.client
        if client is None or self._hooks.list_roots_callback is not None:
            return
        if self._offered.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return
        try:
            with handshake_era():
                await client.send_roots_list_changed()
        except Exception as exc:  # the session went away meanwhile: it lists on reconnect
            self._note(f"could not announce the new roots: {describe(exc)}")
            return
        self._note("the roots changed; told the server (notifications/roots/list_changed)")

    async def tls(self) -> ssl.SSLContext | bool:
        """The server's TLS settings (private CA, client certificate), for the icons from
        its origin: the last connect's, or built now for a lazy server."""
        if self._tls is not None:
            return self._tls
        from portico.runtime.transports.factory import server_tls

        try:
            self._tls = await server_tls(self._spec(), self._hooks)
        except RuntimeFailure as exc:  # a bad ca_cert / client_cert, a missing password
            self._note(f"icons use the system's TLS trust: {exc}")
            return True
        return self._tls

    async def open(self, stack: AsyncExitStack) -> Client:
        from mcp import Client
        from mcp.client.extension import advertise
        from mcp_types import Implementation

        from portico.runtime.tasks import TasksExtension
        from portico.runtime.tool_views import EXTENSION_ID, advertised_settings
        from portico.runtime.transports.factory import build_transport

        spec = self._spec()
        activity = self._activity()
        built = await build_transport(
            spec,
            hooks=self._hooks,
            stack=stack,
            log=self._log,
            recorder=self.recorder,
            shell_timeout=self._shell_timeout,
            note=self._note,
            pinned=self._pins(),
            remember_secrets=self._remember_secrets,
            watch_http=activity.watch_http,
            sandbox_refused=self._sandbox_refused,
        )
        self.proc = built.proc
        self._tls = built.tls
        self._transport_ended = built.transport.ended
        transport = tapped(built.transport, activity)
        stack.callback(activity.end_pending)  # runs as the session closes
        hooks = self._hooks

        def callback(factory: Any) -> Any:
            return factory(spec) if factory is not None else None

        client = Client(
            transport,
            mode="legacy" if spec.protocol is Protocol.LEGACY else "auto",
            read_timeout_seconds=None,
            sampling_callback=callback(hooks.sampling_callback),
            elicitation_callback=callback(hooks.elicitation_callback),
            list_roots_callback=callback(hooks.list_roots_callback)
            or roots.list_roots_callback(spec, self._spec),
            logging_callback=callback(hooks.logging_callback) or self._server_logging.heard,
            log_level=self._server_logging.opening(),  # type: ignore[arg-type]  # 2026: per-request opt-in
            message_handler=self._on_message,
            client_info=Implementation(name=self._client_name, version=_version()),
            extensions=[
                TasksExtension(spec.name),  # advertised on 2026-07-28 requests only
                advertise(EXTENSION_ID, advertised_settings()),  # MCP Apps (portico.apps)
            ],
        )
        return await stack.enter_async_context(client)

    async def serve(self, stop: asyncio.Event) -> str:
        """Hold the session until stop, the process exits, the stream ends, or recycling."""
        spec, calls = self._spec(), self._calls()
        recycle = spec.transport is Transport.STDIO and (
            spec.idle_timeout_seconds > 0 or spec.max_lifetime_seconds > 0
        )
        if spec.is_remote and (spec.idle_timeout_seconds > 0 or spec.max_lifetime_seconds > 0):
            self._note("idle_timeout_seconds / max_lifetime_seconds apply to stdio servers only")
        born = calls.last_activity = time.monotonic()
        # Calls wake this loop only when recycling needs to see them (no per-call cost).
        waits: list[asyncio.Event] = [stop, self._renew]
        if recycle:
            waits.append(calls.activity)
        ended = self._transport_ended if self.proc is None else None
        if self.proc is not None:
            waits.append(self.proc.exited)
        elif ended is not None:
            waits.append(ended)
        while True:
            if stop.is_set():
                return "stop"
            if self._renew.is_set():
                return "renew"
            if self.proc is not None and self.proc.exited.is_set():
                return "exited"
            if ended is not None and ended.is_set():
                return "lost"
            timeout: float | None = None
            if recycle and calls.inflight == 0:
                now = time.monotonic()
                due: list[float] = []
                if spec.idle_timeout_seconds > 0:
                    due.append(calls.last_activity + spec.idle_timeout_seconds)
                if spec.max_lifetime_seconds > 0:
                    due.append(born + spec.max_lifetime_seconds)
                timeout = min(due) - now
                if timeout <= 0:
                    which = (
                        "max_lifetime_seconds"
                        if spec.max_lifetime_seconds > 0 and now >= born + spec.max_lifetime_seconds
                        else "idle_timeout_seconds"
                    )
                    self._note(f"recycling the server process ({which}); the next call restarts it")
                    return "recycle"
            calls.activity.clear()
            waiters = [asyncio.ensure_future(event.wait()) for event in waits]
            try:
                await asyncio.wait(waiters, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for waiter in waiters:
                    waiter.cancel()

    def lost_message(self) -> str:
        spec = self._spec()
        if spec.transport is Transport.SSE:
            return (
                f"the SSE stream from {spec.url} ended (the server closed it or went"
                " away); reconnecting after the cooldown"
            )
        return f"the connection to {spec.url} ended; reconnecting after the cooldown"

    def exited(self) -> ServerExited:
        """The stdio process is gone: its exit code and the tail of its stderr."""
        proc = self.proc
        return ServerExited(
            self._spec().name,
            proc.returncode if proc is not None else None,
            self._log.stderr_tail(STDERR_TAIL_LINES),
        )

    def describe(self, exc: BaseException) -> str:
        """A failed connect in words."""
        proc = self.proc
        leaf = primary(exc)
        if isinstance(leaf, RuntimeFailure | NeedsAuth):
            return str(leaf)
        if proc is not None and proc.self_exit:
            return str(self.exited())
        return describe(
            exc,
            recorder=self.recorder,
            transport=self._spec().transport.value,
            since=self._describe_since,
        )

    async def sign_in_reason(self) -> str | None:
        """Why a URL server without ``oauth`` whose connect ended in a 401 wants a sign-in:
        an OAuth challenge, or (a bare 401) protected-resource metadata at the well-known
        addresses (resource_metadata.py); None when nothing says so."""
        spec = self._spec()
        name = spec.name
        last = self.recorder.last
        if not (
            spec.is_remote
            and spec.oauth is None
            and self._life.phase is Phase.CONNECTING
            and last is not None
            and self.recorder.count > self._describe_since
            and last.status == 401
        ):
            return None
        how = f"run `portico mcp login {name}` or use Sign in in the app."
        if last.oauth_challenge:
            return (
                f"Server '{name}' asks for a sign-in (HTTP 401 with an OAuth challenge"
                f" from {spec.url}); {how}"
            )
        if last.challenge or not spec.url:
            return None  # another scheme (Basic, say): not an OAuth sign-in
        from portico.runtime import resource_metadata

        hook = self._hooks.pinned_addresses
        try:
            found = await resource_metadata.find(
                spec.url,
                pins=hook(spec) if hook is not None else self._pins(),
                verify=self._tls if self._tls is not None else True,
            )
        except Exception as exc:  # a probe that cannot run leaves the plain failure
            self._note(f"could not look for protected-resource metadata: {describe(exc)}")
            return None
        if found is None:
            return None
        return (
            f"Server '{name}' asks for a sign-in (HTTP 401 without a challenge from"
            f" {spec.url}; its protected-resource metadata at {found.url} names the"
            f" authorization server {found.authorization_server}); {how}"
        )


def _version() -> str:
    # The package's own constant: an app bundle may carry no installed metadata, and a
    # server should never be told version "0".
    from portico import __version__

    return __version__
