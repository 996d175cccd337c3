"""The connection's owner task: the driver of :mod:`portico.runtime.lifecycle`.

The owner task enters and leaves the SDK client in one task (anyio cancel scopes demand
it): it runs the trust gate, adopts the schema cache for a lazy server, connects and
serves, and turns every failure, exception groups included, into a phase (NeedsAuth, or
Failed then Cooldown, whose wait doubles up to the cap). Nothing escapes it except a
cancellation from outside, which closes the connection and ends the owner for good.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import Callable
from contextlib import AsyncExitStack
from typing import Any

from portico.config.model import ServerSpec
from portico.runtime import sdklog
from portico.runtime.connection_lists import ServerLists
from portico.runtime.connection_logging import ServerLogging
from portico.runtime.connection_session import Link
from portico.runtime.errors import (
    NeedsAuth,
    RuntimeFailure,
    SandboxProblem,
    SecretProblem,
    describe,
    primary,
)
from portico.runtime.events import AuthRequired, EventBus
from portico.runtime.hooks import ConnectionHooks, TrustVerdict
from portico.runtime.lifecycle import Lifecycle, Mailbox, Phase, Request
from portico.runtime.list_refresher import ListOwner, ListRefresher
from portico.runtime.serverlog import ServerLog
from portico.runtime.session_renewal import RenewalPace

# The first retry comes soon (a restarted server is back in seconds); each failure in a
# row doubles the wait up to the cap. Only a connection that stayed up STABLE_AFTER
# seconds starts the doubling again, so a server that crashes right after connecting is
# not reconnected every COOLDOWN_BASE seconds.
COOLDOWN_BASE = 2.0
COOLDOWN_MAX = 600.0
STABLE_AFTER = 60.0
STOP_GRACE = 10.0
_GENERATIONS = itertools.count(1)  # OwnerTask.generation values
AUTH_PROBE_INTERVAL = 60.0  # how often a server parked in NeedsAuth checks its sign-in
_SCOPE_CANCEL = "Cancelled via cancel scope"  # anyio's message when a cancel scope cancels


class _StopOwner(Exception):
    """Internal: the owner loop should end (stop requested)."""


class _Renew(Exception):
    """Internal: the server forgot the session; the owner starts a new one at once."""


def _from_cancel_scope(exc: asyncio.CancelledError) -> bool:
    """True for a cancellation an anyio cancel scope sent (a transport's), False for
    ``task.cancel()`` from outside (``asyncio.run`` ending, a caller's cancel)."""
    return any(isinstance(arg, str) and arg.startswith(_SCOPE_CANCEL) for arg in exc.args)


class OwnerTask:
    """One task per server walking the lifecycle; its mailbox takes the requests."""

    def __init__(
        self,
        spec: Callable[[], ServerSpec],
        hooks: ConnectionHooks,
        life: Lifecycle,
        *,
        link: Link,
        lists: ServerLists,
        subscriptions: set[str],
        server_logging: ServerLogging,
        list_owner: ListOwner,
        log: ServerLog,
        bus: EventBus,
        note: Callable[[str], None],
        finish: Callable[[], None],
        cooldown_base: float,
        cooldown_max: float,
        auth_probe_interval: float,
    ) -> None:
        self._spec = spec  # the current spec (a reload may replace it)
        self._hooks = hooks
        self._life = life
        self._link = link
        self._lists = lists
        self._subscriptions = subscriptions  # the URIs every new session subscribes to
        self._server_logging = server_logging
        self._list_owner = list_owner  # who the session's list refresher reports to
        self._log = log
        self._bus = bus
        self._note = note
        self._finish = finish  # the owner is gone: end in Stopped
        self.cooldown_base = cooldown_base
        self.cooldown_max = cooldown_max
        self.auth_probe_interval = auth_probe_interval
        self._mail = Mailbox()
        self.task: asyncio.Task[None] | None = None
        self._delay = cooldown_base
        self._up_since: float | None = None  # monotonic time of the last connect
        self.pinned: Any = None  # host -> IPs from the trust verdict (policy's DNS pinning)
        self._verdict: TrustVerdict | None = None  # given by a review just answered (once)
        self._renewals = RenewalPace()
        self.connected_at: float | None = None  # time.time() of the last Running
        self.connect_seconds: float | None = None  # how long the last connect took
        # Changes whenever a connected session ends (unique in the process, so a new
        # Connection never repeats one); Allow-for-this-Session approvals bind to it.
        self.generation = next(_GENERATIONS)

    @property
    def spec(self) -> ServerSpec:
        return self._spec()

    @property
    def name(self) -> str:
        return self._spec().name

    @property
    def running(self) -> bool:
        """The owner task runs."""
        return self.task is not None and not self.task.done()

    def go_live(self) -> None:
        """A call wants a lazy server: connect it."""
        self._mail.post(Request.GO_LIVE)

    def start(self) -> None:
        """Spawn the owner task and return at once."""
        if self.running:
            return
        if not self.spec.enabled:
            self._life.move(Phase.DISABLED)
            return
        self._mail = Mailbox()
        self._life.move(Phase.STARTING)
        self.task = asyncio.create_task(self._owner(), name=f"mcp-owner:{self.name}")

    async def stop(self) -> None:
        """End the owner task: gracefully when Running (the session closes), else at once."""
        task = self.task
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
        self.task = None

    def reset_cooldown(self) -> None:
        self._delay = self.cooldown_base

    def retry_now(self, verdict: TrustVerdict | None) -> bool:
        """Try again at once (resets the cooldown); False when the task must be started
        (then it starts from ``verdict``; a parked-for-trust one takes it too)."""
        self._delay = self.cooldown_base
        if not self.running:
            self._verdict = verdict
            return False
        if verdict is not None and self._life.phase in (Phase.AWAITING_TRUST, Phase.REJECTED):
            self._verdict = verdict
        self._mail.post(Request.RETRY)
        return True

    async def _owner(self) -> None:
        # The SDK's own log records about this server go to its log, not our stderr.
        sdklog.bind_task(self._log)
        lazy_ok = True  # this pass may park lazily (False once a call wants it live)
        try:
            while not self._mail.has(Request.STOP):
                if self._life.phase is not Phase.STARTING:
                    self._life.move(Phase.STARTING)
                self._log.begin_attempt()
                try:
                    if not await self._gate():
                        continue
                    if lazy_ok and self.spec.lazy and await self._lists.adopt_cache():
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
                        self._note(f"needs sign-in: {leaf}")
                        self._life.move(Phase.NEEDS_AUTH, error=str(leaf))
                        self._bus.publish(AuthRequired(self.name, str(leaf)))
                        await self._park_for_auth()
                    elif isinstance(leaf, SecretProblem | SandboxProblem):
                        # No retry loop: nothing changes until the secret is stored (or
                        # the person answers about the sandbox).
                        self._note(f"failed: {leaf}")
                        self._life.move(Phase.FAILED, error=str(leaf))
                        await self._wait_for(Request.RETRY)
                    elif (why := await self._link.sign_in_reason()) is not None:
                        # A URL server without `oauth` that asks for an OAuth sign-in:
                        # park and offer sign-in rather than fail over and over.
                        self._note(f"needs sign-in: {why}")
                        self._life.move(Phase.NEEDS_AUTH, error=why)
                        self._bus.publish(AuthRequired(self.name, why))
                        await self._park_for_auth()
                    else:
                        await self._fail(self._link.describe(exc))
                    lazy_ok = True
        except _StopOwner:
            return
        except asyncio.CancelledError:
            if not self._mail.has(Request.STOP):
                self._note("the connection's owner task was cancelled; connection closed")
            raise
        finally:
            self._link.client = None
            self._finish()

    async def _gate(self) -> bool:
        """Run the trust gate; False after parking in AwaitingTrust (the caller loops)."""
        # A review just answered for this spec gave its verdict: no second round trip.
        verdict, self._verdict = self._verdict, None
        if verdict is None:
            if self._hooks.trust_gate is None:
                return True
            verdict = await self._hooks.trust_gate(self.spec, asking=self._reviewing)
        if self._life.phase is Phase.REVIEWING:
            self._life.move(Phase.STARTING)
        self.pinned = verdict.pinned
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
        if self._hooks.auth_stamp is None:
            await self._wait_for(Request.RETRY)
            return
        refused = await self._auth_stamp(None)
        while not await self._wait_for(Request.RETRY, self.auth_probe_interval):
            stamp = await self._auth_stamp(refused)
            if stamp is not None and stamp != refused:  # a logout is no reason to try
                self._note("the stored sign-in changed; connecting again")
                return

    async def _auth_stamp(self, fallback: str | None) -> str | None:
        assert self._hooks.auth_stamp is not None
        try:
            return await self._hooks.auth_stamp(self.spec)
        except Exception as exc:  # a broken keyring: keep waiting, say why
            self._note(f"cannot read the stored sign-in: {describe(exc)}")
            return fallback

    async def _fail(self, message: str) -> None:
        """Failed, then Cooldown for the current delay (doubling up to cooldown_max)."""
        self._note(f"failed: {message}")
        self._life.move(Phase.FAILED, error=message)
        up_since, self._up_since = self._up_since, None
        if up_since is not None and time.monotonic() - up_since >= STABLE_AFTER:
            self._delay = self.cooldown_base
        delay = self._delay
        self._delay = min(self._delay * 2, self.cooldown_max)
        self._life.move(Phase.COOLDOWN, error=message, retry_at=time.time() + delay)
        await self._wait_for(Request.RETRY, delay)

    async def _connect_and_serve(self) -> None:
        """Connecting -> Running; returns in Lazy when recycled, raises on any loss."""
        self._life.move(Phase.CONNECTING)
        link = self._link
        link.begin()
        started = time.monotonic()
        async with AsyncExitStack() as stack:
            try:
                async with asyncio.timeout(self.spec.connect_timeout):
                    client = await link.open(stack)
                    link.refresher = refresher = ListRefresher(
                        self._list_owner, client, self._subscriptions
                    )
                    await self._lists.fetch(client)
                    caps, version = self._lists.capabilities, self._lists.protocol_version
                    await self._server_logging.ask(client, caps, version)
            except TimeoutError as exc:
                if link.proc is not None and link.proc.self_exit:
                    raise
                raise RuntimeFailure(
                    f"no answer within connect_timeout = {self.spec.connect_timeout:g} s"
                    " (connect + initialize); raise connect_timeout if the server is slow to start"
                ) from exc
            link.connected(client)  # earlier errors were survived
            self.connect_seconds = time.monotonic() - started
            self.connected_at = time.time()
            self._lists.from_cache = False
            await self._lists.save_cache()
            self._up_since = time.monotonic()
            await refresher.listen(self._lists.capabilities, self._lists.protocol_version)
            await refresher.subscribe_all(self._lists.capabilities, self._lists.protocol_version)
            self._life.move(Phase.RUNNING)
            try:
                reason = await link.serve(self._mail.stop)
            finally:
                link.client = None
                link.refresher = None
                self.generation = next(_GENERATIONS)
                await refresher.close()
            if reason == "recycle":
                # Registered, not running: say so before the (slow) process shutdown.
                self._life.move(Phase.LAZY)
            elif reason == "exited":
                raise link.exited()
            elif reason == "lost":
                raise RuntimeFailure(link.lost_message())
        if reason == "stop":
            raise _StopOwner
        if reason == "renew":
            raise _Renew
