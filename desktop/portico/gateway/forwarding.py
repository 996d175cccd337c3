"""What the backend servers say between and during calls, passed on to the endpoint's clients.

- **Notifications.** A server's tools / prompts / resources list changed (the hub's
  ``ToolsChanged`` / ``ListsChanged``), a subscribed resource was updated
  (``ResourceUpdated``) and the server's log lines (``LogLine`` of stream "mcp") reach
  the client sessions whose profile sees that server. Handshake-era (2025-11-25) sessions
  get them on their standing stream; 2026-07-28 clients get list changes and resource
  updates on their ``subscriptions/listen`` stream (:attr:`Forwarder.listen_bus`) and log
  lines only on the stream of a call they opted in on. Progress rides the call, a held
  call's on its newest leg as its log lines do (``server._progress_to``).
- **Requests.** A server's elicitation or sampling request made while a client's call is
  running on that server goes to that client (the newest such call whose client declared
  the capability): the person's rules decide first (``policy/elicitation.py``,
  ``policy/sampling.py`` call :meth:`Forwarder.route_elicitation` /
  :meth:`route_sampling` only after their own checks), otherwise the person is asked in
  Portico as for any other call.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import weakref
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    PromptsListChanged,
    ResourcesListChanged,
    ToolsListChanged,
)
from mcp.server.subscriptions import (
    ResourceUpdated as ListenResourceUpdated,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from portico.gateway.clients import Client
from portico.gateway.input_rounds import HeldCall, InputRounds
from portico.runtime.events import Event, ListsChanged, LogLine, ResourceUpdated, ToolsChanged

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

    from portico.runtime.events import EventBus

log = logging.getLogger(__name__)

LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
Sender = Callable[[Any], Awaitable[Any]]


@dataclass(eq=False)
class Watched:
    """A handshake-era client session the endpoint may notify."""

    client: Client
    level: str | None = None  # from logging/setLevel; None: no log lines
    uris: set[str] = field(default_factory=set)  # resources/subscribe


@dataclass(eq=False)
class Leg:
    """One request of a client's call: the SDK's context for it, or (a call the
    endpoint's fast path serves, ``fast_path.py``) none, only the capabilities the
    request declared. A leg without a context has no stream: nothing is sent on it."""

    ctx: ServerRequestContext[Any, Any] | None
    declared: Callable[[types.ClientCapabilities], bool]

    @classmethod
    def of(cls, ctx: ServerRequestContext[Any, Any]) -> Leg:
        return cls(ctx, ctx.session.check_client_capability)

    @property
    def can_send_request(self) -> bool:
        return self.ctx is not None and self.ctx.session.can_send_request

    def can_be_asked(self) -> bool:
        """The client declared elicitation or sampling."""
        with contextlib.suppress(Exception):
            return any(self.declared(c) for c in _ASKABLE)
        return False


_ASKABLE = (
    types.ClientCapabilities(elicitation=types.ElicitationCapability()),
    types.ClientCapabilities(sampling=types.SamplingCapability()),
)


@dataclass(eq=False)
class InFlight:
    client: Client
    leg: Leg  # a held call's: its newest leg
    held: HeldCall | None = None  # a 2026-07-28 call held across the client's retries


def _modern(ctx: ServerRequestContext[Any, Any]) -> bool:
    return getattr(ctx.session, "protocol_version", None) in MODERN_PROTOCOL_VERSIONS


def _at_least(level: str, wanted: str | None) -> bool:
    if wanted is None or level not in LEVELS:
        return False
    return LEVELS.index(level) >= LEVELS.index(wanted if wanted in LEVELS else "info")


class Forwarder:
    def __init__(self, bus: EventBus) -> None:
        self.listen_bus = InMemorySubscriptionBus()  # 2026-07-28 subscriptions/listen
        self.rounds = InputRounds()  # 2026-07-28 calls waiting for the client's answers
        self._sessions: weakref.WeakKeyDictionary[Any, Watched] = weakref.WeakKeyDictionary()
        self._calls: dict[str, list[InFlight]] = {}  # server -> calls running on it
        self._tasks: set[asyncio.Task[None]] = set()
        self._unsubscribe = bus.subscribe(self._on_event)

    def close(self) -> None:
        self._unsubscribe()
        self.rounds.close()
        for task in list(self._tasks):
            task.cancel()

    # --- who is there ----------------------------------------------------------------

    def seen(self, ctx: ServerRequestContext[Any, Any], client: Client) -> Watched | None:
        """Remember a handshake-era session (it has a standing stream to notify)."""
        if _modern(ctx):
            return None
        # Each request has its own ServerSession; the client's session is the SDK's
        # connection behind them (its standalone stream is ``connection.outbound``).
        connection = getattr(ctx.session, "_connection", None)
        if connection is None:
            return None
        watched = self._sessions.get(connection)
        if watched is None or watched.client is not client:
            watched = self._sessions[connection] = Watched(client)
        return watched

    @contextlib.contextmanager
    def calling(
        self,
        server: str | None,
        leg: Leg,
        client: Client,
        held: HeldCall | None = None,
    ) -> Iterator[InFlight | None]:
        """A client's call runs on ``server``: its requests and log lines go to it."""
        if server is None:
            yield None
            return
        entry = InFlight(client, leg, held)
        running = self._calls.setdefault(server, [])
        running.append(entry)
        try:
            yield entry
        finally:
            running.remove(entry)
            if not running:
                del self._calls[server]

    def entries_of(self, held: HeldCall) -> list[InFlight]:
        return [e for running in self._calls.values() for e in running if e.held is held]

    # --- requests from a server --------------------------------------------------------

    def _caller(self, server: str, capability: types.ClientCapabilities) -> InFlight | None:
        for entry in reversed(self._calls.get(server, [])):
            with contextlib.suppress(Exception):
                # A 2026-07-28 request has no back-channel: its call is held and the
                # question goes in an input-required result (input_rounds.py).
                if not entry.leg.declared(capability):
                    continue
                if entry.held is not None or entry.leg.can_send_request:
                    return entry
        return None

    def _sender(self, entry: InFlight, request_type: Any, answer: type[Any]) -> Sender:
        held = entry.held
        if held is not None:

            async def put(params: Any) -> Any:
                return await self.rounds.ask(held, request_type(params=params), answer)

            return put
        ctx = entry.leg.ctx
        assert ctx is not None  # _caller chose it: it can send requests

        async def send(params: Any) -> Any:
            request = request_type(params=params)
            return await ctx.session.send_request(request, answer, metadata=_related(ctx))

        return send

    def route_elicitation(self, server: str) -> Sender | None:
        entry = self._caller(
            server, types.ClientCapabilities(elicitation=types.ElicitationCapability())
        )
        if entry is None:
            return None
        return self._sender(entry, types.ElicitRequest, types.ElicitResult)

    def route_sampling(self, server: str) -> Sender | None:
        entry = self._caller(server, types.ClientCapabilities(sampling=types.SamplingCapability()))
        if entry is None:
            return None
        return self._sender(entry, types.CreateMessageRequest, types.CreateMessageResult)

    # --- notifications -------------------------------------------------------------------

    def _on_event(self, event: Event) -> None:
        if isinstance(event, ToolsChanged):
            self._spawn(self._lists(event.server, ("tools",)))
        elif isinstance(event, ListsChanged):
            self._spawn(self._lists(event.server, event.kinds))
        elif isinstance(event, ResourceUpdated):
            self._spawn(self._updated(event.server, event.uri))
        elif isinstance(event, LogLine) and event.stream == "mcp":
            self._spawn(self._log(event))

    def _spawn(self, coro: Awaitable[None]) -> None:
        task: asyncio.Task[None] = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _watching(self, server: str) -> list[tuple[Any, Watched]]:
        return [(s, w) for s, w in list(self._sessions.items()) if w.client.sees_server(server)]

    async def _lists(self, server: str, kinds: tuple[str, ...]) -> None:
        events: dict[str, ToolsListChanged | PromptsListChanged | ResourcesListChanged] = {
            "tools": ToolsListChanged(),
            "prompts": PromptsListChanged(),
            "resources": ResourcesListChanged(),
        }
        for kind in kinds:
            await self.listen_bus.publish(events[kind])
        notes = {
            "tools": types.ToolListChangedNotification(),
            "prompts": types.PromptListChangedNotification(),
            "resources": types.ResourceListChangedNotification(),
        }
        for connection, _watched in self._watching(server):
            for kind in kinds:
                await _quietly(_standalone(connection, notes[kind]))

    async def _updated(self, server: str, uri: str) -> None:
        await self.listen_bus.publish(ListenResourceUpdated(uri))
        note = types.ResourceUpdatedNotification(
            params=types.ResourceUpdatedNotificationParams(uri=uri)
        )
        for connection, watched in self._watching(server):
            if uri in watched.uris:
                await _quietly(_standalone(connection, note))

    async def _log(self, line: LogLine) -> None:
        level: Any = line.level if line.level in LEVELS else "info"
        data = line.text
        told: set[int] = set()
        for entry in list(self._calls.get(line.server, [])):
            # the call's own stream: both revisions (2026 only when the call opted in;
            # the fast path serves only calls that did not)
            ctx = entry.leg.ctx
            if ctx is None:
                continue
            told.add(id(getattr(ctx.session, "_connection", None)))
            with deprecated_ok():
                sent = ctx.session.send_log_message(
                    level, data, logger=line.server, related_request_id=ctx.request_id
                )
            await _quietly(sent)
        note = types.LoggingMessageNotification(
            params=types.LoggingMessageNotificationParams(
                level=level, data=data, logger=line.server
            )
        )
        for connection, watched in self._watching(line.server):
            if id(connection) not in told and _at_least(level, watched.level):
                await _quietly(_standalone(connection, note))


async def _standalone(connection: Any, notification: Any) -> None:
    """A notification on a handshake-era client's standing stream (as the SDK's
    ``ServerSession`` sends one without a related request)."""
    data = notification.model_dump(by_alias=True, mode="json", exclude_none=True)
    await connection.outbound.notify(data["method"], data.get("params"))


def _related(ctx: ServerRequestContext[Any, Any]) -> Any:
    from mcp.shared.message import ServerMessageMetadata

    return ServerMessageMetadata(related_request_id=ctx.request_id)


@contextlib.contextmanager
def deprecated_ok() -> Iterator[None]:
    """Logging is deprecated in 2026-07-28 and still what handshake-era clients use."""
    import warnings

    from mcp.shared.exceptions import MCPDeprecationWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        yield


async def _quietly(sent: Awaitable[Any]) -> None:
    try:
        await sent
    except Exception as exc:  # a session that went away: nothing to tell any more
        log.debug("gateway: a notification was not delivered: %s", exc)
