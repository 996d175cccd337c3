"""The hub: one Connection per configured server, reconciled against the config, and the
tool registry fed from them.

``Hub.apply(config)`` starts added servers, stops removed ones, restarts changed ones
(by :meth:`ServerSpec.digest`) and leaves the rest alone, then runs a discovery pass over
the servers it started: at most ``discovery_concurrency`` connects at once (0 = no limit;
a slot refills as soon as a server settles), each slot bounded by :data:`WAVE_BUDGET`
seconds and the whole pass by :data:`PASS_BUDGET`. Servers still connecting when the pass
budget runs out keep connecting in the background. After a pass the hub publishes one
:class:`DiscoveryFinished` with the summary line (grammar in :mod:`portico.runtime.summary`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Coroutine, Iterable
from typing import TYPE_CHECKING, Any

from portico.config.model import Config, RuntimeSettings, ServerSpec

from .events import (
    DiscoveryFinished,
    Event,
    EventBus,
    LogLine,
    ServerState,
    Status,
    StatusChanged,
    ToolsChanged,
)
from .hooks import ConnectionHooks, TrustVerdict
from .registry import Registry
from .roots import declares_roots
from .summary import PassSummary

if TYPE_CHECKING:
    from .connection import Connection

log = logging.getLogger(__name__)

WAVE_BUDGET = 120.0
PASS_BUDGET = 300.0
_REGISTERED = frozenset({Status.RUNNING, Status.LAZY})

ConnectionFactory = Callable[[ServerSpec, EventBus, ConnectionHooks], "Connection"]


def _identity(spec: ServerSpec) -> str:
    """What makes a restart necessary: the config digest plus the file and scope it came
    from (a server moved into a project file must pass the project trust gate again).
    The line is left out: editing another server above it must not restart it. The roots
    are too (they are announced), except whether there are any: the roots capability is
    declared when the session starts."""
    roots = "roots" if declares_roots(spec) else ""
    return f"{spec.digest()}|{spec.source.scope}|{spec.source.path}|{roots}"


def _default_factory(spec: ServerSpec, bus: EventBus, hooks: ConnectionHooks) -> Connection:
    from .connection import Connection

    return Connection(spec, bus=bus, hooks=hooks)


class UnknownServer(LookupError):
    """``Hub.connection`` of a name not in the config. A LookupError (catch that), not a
    KeyError: ``str(KeyError(msg))`` wraps the message in quotes."""


def _why_down(state: ServerState) -> str:
    """What a call of a tool of a server that is not running is told."""
    if state.retry_at:
        when = time.strftime("%H:%M:%S", time.localtime(state.retry_at))
        return f"retry at {when}"
    return f"status {state.status}"


class Hub:
    def __init__(
        self,
        bus: EventBus | None = None,
        hooks: ConnectionHooks | None = None,
        *,
        connection_factory: ConnectionFactory | None = None,
        wave_budget: float = WAVE_BUDGET,
        pass_budget: float = PASS_BUDGET,
    ) -> None:
        self.bus = bus or EventBus()
        self.hooks = hooks or ConnectionHooks()
        self.registry = Registry()
        self.connections: dict[str, Connection] = {}
        self.settings = RuntimeSettings()
        self.wave_budget = wave_budget
        self.pass_budget = pass_budget
        self._factory = connection_factory or _default_factory
        self._digests: dict[str, str] = {}  # name -> _identity(spec) it was started with
        self._order: list[str] = []
        self._apply_lock = asyncio.Lock()
        self._background: set[asyncio.Task[Any]] = set()
        self._warned: dict[str, list[str]] = {}
        self._synced: dict[str, list[Any]] = {}  # the tool list object last registered
        self._last_summary = PassSummary()
        self._closed = False
        self._unsubscribe = self.bus.subscribe(self._on_event)

    # --- public API -------------------------------------------------------------

    def connection(self, name: str) -> Connection:
        conn = self.connections.get(name)
        if conn is None:
            known = ", ".join(self._order) or "none"
            raise UnknownServer(f"no server named {name!r} in the config (configured: {known})")
        return conn

    def states(self) -> list[ServerState]:
        return [self.connections[n].state for n in self._order if n in self.connections]

    def summary_line(self) -> str:
        return self._last_summary.line()

    async def apply(self, config: Config) -> str:
        """Reconcile with ``config`` and run a discovery pass; returns the summary line."""
        async with self._apply_lock:
            self.settings = config.settings
            self.registry.defer_tools = config.settings.defer_tools
            desired = {s.name: s for s in config.servers}
            removed = [n for n in self.connections if n not in desired]
            changed = [
                n
                for n, s in desired.items()
                if n in self.connections and self._digests.get(n) != _identity(s)
            ]
            # A changed server is the same server: its Activity (and the health read
            # from it) goes on in the connection that replaces this one.
            history = {n: self.connections[n].activity for n in changed}
            stopping = [self.connections.pop(n) for n in [*removed, *changed]]
            for name in removed:
                self._digests.pop(name, None)
            for name in [*removed, *changed]:
                self.registry.remove_server(name)
                self._warned.pop(name, None)
                self._synced.pop(name, None)
            if stopping:
                await self._stop_all(stopping)
            fresh: list[Connection] = []
            for spec in config.servers:
                kept = self.connections.get(spec.name)
                if kept is not None:
                    # Same server: its line in the file may have moved, its roots changed.
                    old, kept.spec = kept.spec, spec
                    if old.roots != spec.roots:
                        self._spawn(kept.announce_roots(), f"roots:{spec.name}")
                    continue
                conn = self._factory(spec, self.bus, self.hooks)
                if spec.name in history:
                    conn.activity = history[spec.name]
                self.connections[spec.name] = conn
                self._digests[spec.name] = _identity(spec)
                fresh.append(conn)
            self._order = [s.name for s in config.servers]
            attempted = await self._discover(fresh)
            summary = self._summarize(attempted)
            self._last_summary = summary
            line = summary.line()
            self.bus.publish(DiscoveryFinished(line))
            return line

    async def retry(self, name: str) -> ServerState:
        conn = self.connection(name)
        await conn.retry_now()
        await self._settle(conn, self.wave_budget)
        return conn.state

    async def admit(self, name: str, spec: ServerSpec, verdict: TrustVerdict) -> ServerState:
        """Go on with ``name`` from ``verdict``, the trust gate's answer for ``spec`` that a
        review the person just answered gave (the app's Review trust…): allowed, it starts
        without a second trust round trip; refused, it parks with the verdict's reasons.
        A connection whose spec changed since is retried and asks its gate as usual."""
        conn = self.connection(name)
        await conn.retry_now(verdict=verdict if conn.spec == spec else None)
        await self._settle(conn, self.wave_budget)
        return conn.state

    async def restart(self, name: str) -> ServerState:
        conn = self.connection(name)
        await conn.restart()
        await self._settle(conn, self.wave_budget)
        return conn.state

    def detach_tasks(self) -> None:
        """Shutting down: calls cancelled from now on leave their server-side tasks
        running (they are followed again after a restart, runtime/tasks.py)."""
        for conn in self.connections.values():
            conn.tasks.detach = True

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self.detach_tasks()
        for task in list(self._background):
            task.cancel()
        for task in list(self._background):
            with contextlib.suppress(BaseException):
                await task
        conns = list(self.connections.values())
        self.connections.clear()
        for conn in conns:
            conn.hurry_stop()  # the app or the command quits: nobody waits on the servers
        await self._stop_all(conns)
        for conn in conns:
            self.registry.remove_server(conn.name)
        self._unsubscribe()

    async def __aenter__(self) -> Hub:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def _spawn(self, work: Coroutine[Any, Any, None], name: str) -> None:
        """Run ``work`` beside the hub (cancelled by close)."""
        task = asyncio.create_task(work, name=name)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    # --- discovery --------------------------------------------------------------

    async def _settle(self, conn: Connection, budget: float) -> None:
        if budget <= 0:
            return
        # wait_settled bounds itself; the outer wait_for is a safety net of a second.
        with contextlib.suppress(TimeoutError, asyncio.TimeoutError):
            await asyncio.wait_for(conn.wait_settled(budget), budget + 1.0)
        self._sync(conn.name)

    async def _discover(self, conns: list[Connection]) -> set[str]:
        if not conns:
            return set()
        limit = self.settings.discovery_concurrency or len(conns)
        slots = asyncio.Semaphore(limit)
        deadline = time.monotonic() + self.pass_budget
        attempted: set[str] = set()

        async def one(conn: Connection) -> None:
            async with slots:
                if self._closed:
                    return
                attempted.add(conn.name)
                await conn.start()
                remaining = deadline - time.monotonic()
                await self._settle(conn, min(self.wave_budget, max(remaining, 0.0)))

        tasks = [asyncio.create_task(one(c), name=f"discover:{c.name}") for c in conns]
        done, pending = await asyncio.wait(tasks, timeout=self.pass_budget)
        for task in done:
            if not task.cancelled() and task.exception() is not None:
                exc = task.exception()
                log.error("discovery of a server failed unexpectedly: %r", exc)
        for task in pending:  # past the pass budget: keep connecting in the background
            self._background.add(task)
            task.add_done_callback(self._background.discard)
        return attempted

    def _summarize(self, attempted: Iterable[str]) -> PassSummary:
        tried = set(attempted)
        summary = PassSummary(tools=len(self.registry))
        for name in self._order:
            conn = self.connections.get(name)
            if conn is None:
                continue
            state = conn.state
            status = state.status
            if status is Status.RUNNING:
                summary.servers += 1
            elif status is Status.LAZY:
                summary.servers += 1
                summary.lazy += 1
            elif status is Status.CONNECTING:
                summary.connecting.append(name)
            elif status is Status.AWAITING_TRUST:
                summary.awaiting_trust.append(name)
            elif status is Status.NEEDS_AUTH:
                summary.needs_auth.append(name)
            elif status is Status.FAILED or (status is Status.COOLDOWN and name in tried):
                summary.failed.append((name, state.error or "failed"))
            elif status is Status.COOLDOWN:
                summary.cooldown.append(name)
            elif status is Status.STOPPED and name in tried:
                # never silently missing: a start that ended without a status of its own
                summary.failed.append((name, state.error or "did not start (see its log)"))
        return summary

    # --- registry sync ----------------------------------------------------------

    def _on_event(self, event: Event) -> None:
        if isinstance(event, StatusChanged):
            self._sync(event.state.name)
        elif isinstance(event, ToolsChanged):
            self._sync(event.server)

    def _sync(self, name: str) -> None:
        conn = self.connections.get(name)
        if conn is None:
            return
        status = conn.state.status
        if status is Status.CONNECTING:
            return  # a lazy or recycled server starting: its tools stay as they are
        if status not in _REGISTERED:
            self._synced.pop(name, None)
            if name in self.registry.servers():
                self.registry.remove_server(name, down=_why_down(conn.state))
            return
        if self._synced.get(name) is conn.tools:
            return  # the connection replaces its list on every change: nothing new
        self._synced[name] = conn.tools
        warnings = self.registry.set_server(
            conn.spec, list(conn.tools), capabilities=conn.capabilities, caller=conn
        )
        if warnings != self._warned.get(name):
            self._warned[name] = warnings
            for text in warnings:
                log.warning("%s", text)
                note = getattr(conn, "note", None)
                if note is not None:
                    note(f"warning: {text}")  # into the server's log; it publishes a LogLine
                else:
                    self.bus.publish(LogLine(name, f"warning: {text}", stream="portico"))

    async def _stop_all(self, conns: list[Connection]) -> None:
        async def stop(conn: Connection) -> None:
            try:
                await conn.stop()
            except Exception:
                log.exception("stopping server %r failed", conn.name)

        await asyncio.gather(*(stop(c) for c in conns))
