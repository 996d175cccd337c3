"""Every JSON-RPC message between Portico and one server: a bounded ring in memory.

:func:`tapped` wraps a transport (an async context manager yielding the read and write
streams the SDK's client uses) so each message is recorded as it passes; nothing about
the messages changes. A request and its reply form one :class:`Exchange` (direction,
method, time, duration, size, status). :meth:`ActivityLog.watch_http` adds the HTTP
request headers of a Streamable HTTP / SSE server to the exchange they carried.

Cost: the tap only notes each message with its time; a burst of them is recorded within
``NOTIFY_EVERY`` (one timer), off the calls' path, and every reader records what was noted
first. A recorded message is its JSON bytes, made by pydantic's serializer in C
(:class:`Payload`), and becomes data only when a face fetches it; the ring holds at most
``KEPT_BUDGET`` bytes of messages (older ones keep their size only).
``tests/benchmarks/test_bench_activity.py`` measures calls with the tap on and paused.

Who asked: a request Portico sends names its caller (``Exchange.caller``: "chat 3f2a…",
"the view ui://… of docs", "client claude-code", "Try it"), taken from :data:`CALLER`,
which :func:`calling` sets in the task that makes the request (the SDK writes a request
from its caller's task, so the tap sees the caller's context).

Secrets: an exchange keeps the messages as sent (the log lives in memory only, like the
session itself); :func:`masked` gives the copy any face shows or exports, with the values
of secret-looking keys and headers replaced. Runs on the runtime loop; no Qt here.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from portico.config.masking import HIDDEN, is_secret_key, mask_text, mask_url
from portico.runtime.events import ActivityChanged, EventBus
from portico.runtime.health import HealthRecorder

RING = 1000  # exchanges kept per server
MAX_KEPT_BYTES = 256 * 1024  # a bigger message is kept as a note of its size only
KEPT_BUDGET = 16 * 1024 * 1024  # message bytes a server's ring holds; older ones: size only
NOTIFY_EVERY = 0.1  # seconds: a burst of traffic is recorded and announced together
SANDBOX_REFUSED = "sandbox/refused"  # an event entry: the sandbox refused a host
SANDBOX_LEARNED = "sandbox/learned"  # learn mode let through a host not in its allow list
NOT_SECRET = frozenset({"progressToken", "nextCursor", "cursor"})

# Who makes the requests sent from this context (a person-readable description).
CALLER: ContextVar[str] = ContextVar("portico_activity_caller", default="")


@contextmanager
def calling(caller: str) -> Iterator[None]:
    """The requests sent within are recorded as asked by ``caller``."""
    token = CALLER.set(caller)
    try:
        yield
    finally:
        CALLER.reset(token)


Direction = Literal["out", "in"]  # out: Portico -> server; in: server -> Portico
Kind = Literal["request", "notification", "response"]


class Payload:
    """One message as JSON bytes, made by pydantic's serializer (C: ~3 us for a call's
    request, and the exact size) when the message is recorded; turned into data only when
    a face asks. A message over ``MAX_KEPT_BYTES``, or one the ring's budget has passed,
    keeps its size only, so the ring never holds large results."""

    __slots__ = ("_data", "_raw", "cost", "size")

    def __init__(self, model: Any) -> None:
        raw = _json_bytes(model)
        self.size = len(raw)  # bytes of the message's JSON
        self._raw: bytes | None = raw if self.size <= MAX_KEPT_BYTES else None
        self.cost = self.size if self._raw is not None else 0  # the ring's budget
        self._data: dict[str, Any] | None = None

    def forget(self) -> None:
        """Keep the size only (the ring's memory budget is spent on newer messages)."""
        self._raw = None
        self._data = None
        self.cost = 0

    @property
    def data(self) -> dict[str, Any] | None:
        """The message as JSON data (None when it was too big to keep)."""
        raw = self._raw
        if self._data is None and raw is not None:
            self._data = json.loads(raw)
        return self._data


def _json_bytes(model: Any) -> bytes:
    serializer = getattr(type(model), "__pydantic_serializer__", None)
    if serializer is not None:
        return bytes(serializer.to_json(model, by_alias=True, exclude_none=True))
    return json.dumps(model, default=str).encode("utf-8")


@dataclass(frozen=True, init=False)
class Exchange:
    seq: int
    server: str
    direction: Direction  # who sent the first message
    kind: Kind  # "response": a reply whose request was not seen (kept anyway)
    method: str
    time: float  # time.time() of the first message
    id: str | None = None
    payload: Payload | None = None  # the first message
    reply_payload: Payload | None = None
    duration: float | None = None  # seconds until the reply
    error: str | None = None  # the reply's error ("-32601 Method not found")
    failed_result: bool = False  # the reply is a result that says isError
    headers: dict[str, str] = field(default_factory=dict)  # HTTP request headers
    version: int = 0  # the log's change counter when this exchange last changed
    caller: str = ""  # who asked Portico to send it ("" when nobody said: Portico itself)

    def __init__(
        self,
        seq: int,
        server: str,
        direction: Direction,
        kind: Kind,
        method: str,
        time: float,
        id: str | None = None,
        payload: Payload | None = None,
        reply_payload: Payload | None = None,
        duration: float | None = None,
        error: str | None = None,
        failed_result: bool = False,
        headers: dict[str, str] | None = None,
        version: int = 0,
        caller: str = "",
    ) -> None:
        # Written once, straight into the instance (the frozen dataclass's own __init__
        # sets each field through object.__setattr__): 2.9 -> 1.2 us with positional
        # arguments, and every message makes one. Still frozen: assigning a field raises.
        self.__dict__.update(
            seq=seq,
            server=server,
            direction=direction,
            kind=kind,
            method=method,
            time=time,
            id=id,
            payload=payload,
            reply_payload=reply_payload,
            duration=duration,
            error=error,
            failed_result=failed_result,
            headers={} if headers is None else headers,
            version=version,
            caller=caller,
        )

    @property
    def status(self) -> str:
        if self.kind == "notification":
            return ""
        if self.kind == "request" and self.duration is None:
            return "pending"
        if self.error in ENDED_UNANSWERED:
            return self.error
        return f"error {self.error}" if self.error else "ok"

    @property
    def message(self) -> dict[str, Any] | None:
        """The first message's JSON data; None when it was too big to keep."""
        return self.payload.data if self.payload is not None else None

    @property
    def reply(self) -> dict[str, Any] | None:
        return self.reply_payload.data if self.reply_payload is not None else None

    @property
    def size(self) -> int:
        """Bytes of the first message's JSON."""
        return self.payload.size if self.payload is not None else 0

    @property
    def reply_size(self) -> int:
        return self.reply_payload.size if self.reply_payload is not None else 0

    @property
    def total_size(self) -> int:
        return self.size + self.reply_size


def _fields(message: Any) -> dict[str, Any]:
    """A pydantic message's fields, read without ``getattr`` (a missing attribute goes
    through pydantic's ``__getattr__`` and an exception: the dearest part of a tap)."""
    fields = getattr(message, "__dict__", None)
    return fields if isinstance(fields, dict) else {}


def _error_text(fields: dict[str, Any]) -> str | None:
    err = fields.get("error")
    if err is None:
        return None
    if isinstance(err, dict):
        code, text = err.get("code"), err.get("message", "")
    else:
        code, text = getattr(err, "code", None), getattr(err, "message", "")
    return f"{code} {text or ''}".strip()


def _failed_result(fields: dict[str, Any]) -> bool:
    result = fields.get("result")
    return isinstance(result, dict) and result.get("isError") is True


# How a request that never got its reply ends: its sender cancelled it, or the
# connection closed under it (a reply can no longer come).
CANCELLED = "cancelled"
CONNECTION_CLOSED = "connection closed"
ENDED_UNANSWERED = (CANCELLED, CONNECTION_CLOSED)


def _answered(
    request: Exchange,
    reply: Payload | None,
    duration: float,
    error: str | None,
    failed_result: bool,
    version: int,
) -> Exchange:
    """``request`` with its reply (what ``dataclasses.replace`` makes, at a third of the
    cost: every call's reply passes here; positional, as keywords cost twice as much)."""
    return Exchange(
        request.seq,
        request.server,
        request.direction,
        request.kind,
        request.method,
        request.time,
        request.id,
        request.payload,
        reply,
        duration,
        error,
        failed_result,
        request.headers,
        version,
        request.caller,
    )


class ActivityLog:
    """The recent exchanges of one server (kept across reconnects, and across the restart
    an edit of its config makes: Hub.apply hands it to the new connection)."""

    def __init__(
        self,
        server: str,
        *,
        bus: EventBus | None = None,
        limit: int = RING,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.server = server
        self.bus = bus
        self.limit = limit
        self._clock = clock
        self._entries: OrderedDict[int, Exchange] = OrderedDict()
        self._pending: dict[tuple[Direction, str], int] = {}
        self._seq = 0
        self._version = 0
        self._announce: asyncio.TimerHandle | None = None
        self._health = HealthRecorder(clock)
        self.listeners: list[Callable[[Exchange], None]] = [self._health.observe]
        self.paused = False  # True: messages pass unrecorded (the tap's benchmark baseline)
        self._kept: deque[Payload] = deque()  # payloads holding data, oldest first
        self._kept_bytes = 0
        # noted, not recorded: (direction, message, time, caller), or
        # (None, (body, headers), 0.0, "") for an HTTP request's headers
        self._unread: deque[tuple[Direction | None, Any, float, str]] = deque()

    @property
    def health(self) -> HealthRecorder:
        self._catch_up()
        return self._health

    # --- recording --------------------------------------------------------------------

    def note(self, direction: Direction, message: Any) -> None:
        """One message passed (the tap's hot path): only its time is taken now. It is
        recorded within ``NOTIFY_EVERY``, with the rest of its burst, off the call's path;
        every reader catches up on what was noted first, so nobody sees the log behind."""
        if self.paused:
            return
        self._unread.append((direction, message, self._clock(), CALLER.get()))
        if self._announce is None and not self._schedule():
            self._catch_up()

    def record(self, direction: Direction, message: Any) -> Exchange | None:
        """One message passed (``message``: the SDK's JSONRPCMessage), recorded now (what
        was noted before it first)."""
        if self.paused:
            return None
        self._catch_up()
        return self._record(direction, message, self._clock(), CALLER.get())

    def _catch_up(self) -> None:
        """Record what was noted, in order."""
        unread = self._unread
        while unread:
            direction, message, at, caller = unread.popleft()
            if direction is None:
                self._match_headers(*message)
            else:
                self._record(direction, message, at, caller)

    def _record(
        self, direction: Direction, message: Any, now: float, caller: str = ""
    ) -> Exchange | None:
        try:
            payload = Payload(message)
        except Exception:  # never let recording break the connection
            return None
        self._keep(payload)
        fields = _fields(message)
        method = fields.get("method")
        raw_id = fields.get("id")
        msg_id = None if raw_id is None else str(raw_id)
        if method is not None:
            kind: Kind = "request" if msg_id is not None else "notification"
            asker = caller if direction == "out" else ""
            entry = self._add(direction, kind, str(method), now, msg_id, payload, asker)
            if kind == "request" and msg_id is not None:
                self._pending[(direction, msg_id)] = entry.seq
            elif method == "notifications/cancelled":
                params = fields.get("params")
                cancelled = params.get("requestId") if isinstance(params, dict) else None
                if cancelled is not None:  # the request went the way its cancel goes
                    self._end((direction, str(cancelled)), CANCELLED, now)
            return entry
        # a reply: to a request that went the other way
        asked: Direction = "in" if direction == "out" else "out"
        seq = self._pending.pop((asked, msg_id), None) if msg_id is not None else None
        request = self._entries.get(seq) if seq is not None else None
        if request is None:
            return self._add(direction, "response", "", now, msg_id, payload)
        updated = _answered(
            request,
            payload,
            max(0.0, now - request.time),
            _error_text(fields),
            _failed_result(fields),
            self._bump(),
        )
        self._entries[request.seq] = updated
        self._changed(updated)
        return updated

    def _end(self, key: tuple[Direction, str], error: str, now: float) -> None:
        seq = self._pending.pop(key, None)
        request = self._entries.get(seq) if seq is not None else None
        if request is None:
            return
        duration = max(0.0, now - request.time)
        updated = _answered(request, None, duration, error, False, self._bump())
        self._entries[request.seq] = updated
        self._changed(updated)

    def event(self, method: str, params: dict[str, Any]) -> Exchange:
        """Something of ours about this server that is not a message of its own (the
        sandbox refused a host): one notification-like entry, ``method`` naming what."""
        self._catch_up()
        message = {"jsonrpc": "2.0", "method": method, "params": params}
        payload = Payload(message)
        self._keep(payload)
        return self._add("in", "notification", method, self._clock(), None, payload)

    def end_pending(self) -> None:
        """The connection closed: every request still waiting ends, none will be answered."""
        self._catch_up()
        now = self._clock()
        for key in list(self._pending):
            self._end(key, CONNECTION_CLOSED, now)

    def _add(
        self,
        direction: Direction,
        kind: Kind,
        method: str,
        now: float,
        msg_id: str | None,
        payload: Payload,
        caller: str = "",
    ) -> Exchange:
        self._seq += 1
        self._version += 1
        entry = Exchange(
            self._seq,
            self.server,
            direction,
            kind,
            method,
            now,
            msg_id,
            payload,
            None,
            None,
            None,
            False,
            None,
            self._version,
            caller,
        )
        self._entries[entry.seq] = entry
        while len(self._entries) > self.limit:
            _seq, old = self._entries.popitem(last=False)
            if old.id is not None:
                self._pending.pop((old.direction, old.id), None)
            for gone in (old.payload, old.reply_payload):
                if gone is not None:
                    self._kept_bytes -= gone.cost
                    gone.forget()
        self._changed(entry)
        return entry

    def _keep(self, payload: Payload) -> None:
        """Hold ``payload`` within the memory budget: the oldest messages beyond it keep
        their size only (a ring of big results would otherwise hold hundreds of MiB)."""
        if payload.cost:
            self._kept.append(payload)
            self._kept_bytes += payload.cost
        while self._kept and (self._kept_bytes > KEPT_BUDGET or not self._kept[0].cost):
            old = self._kept.popleft()
            self._kept_bytes -= old.cost
            old.forget()

    def attach_headers(self, body: bytes, headers: Iterable[tuple[str, str]]) -> None:
        """The HTTP request that carried the request ``body`` had these headers (the HTTP
        hook's hot path, like ``note``: matched to the request, which was noted before it
        was sent, when the log catches up)."""
        if self.paused:
            return
        self._unread.append((None, (body, dict(headers)), 0.0, ""))
        if self._announce is None and not self._schedule():
            self._catch_up()

    def _match_headers(self, body: bytes, headers: dict[str, str]) -> None:
        try:
            data = json.loads(body) if body else None
        except ValueError:
            return
        if not isinstance(data, dict) or data.get("id") is None:
            return
        seq = self._pending.get(("out", str(data["id"])))
        entry = self._entries.get(seq) if seq is not None else None
        if entry is not None:
            self._entries[entry.seq] = replace(entry, headers=headers, version=self._bump())
            self._changed(self._entries[entry.seq])

    def watch_http(self, client: Any) -> None:
        """Note the headers of every request ``client`` (an httpx2.AsyncClient) sends."""

        async def on_request(request: Any) -> None:
            try:
                body = request.content
            except Exception:  # a streaming body: nothing to match
                return
            self.attach_headers(body, request.headers.items())

        hooks = getattr(client, "event_hooks", None)
        if isinstance(hooks, dict):
            hooks.setdefault("request", []).append(on_request)
            client.event_hooks = hooks

    def _bump(self) -> int:
        self._version += 1
        return self._version

    @property
    def version(self) -> int:
        self._catch_up()
        return self._version

    def _changed(self, entry: Exchange) -> None:
        for listener in list(self.listeners):
            try:
                listener(entry)
            except Exception:  # a listener's bug never breaks the server
                continue
        if self.bus is not None and self._announce is None:
            self._schedule()

    def _schedule(self) -> bool:
        """Sort and announce within NOTIFY_EVERY (one timer for a burst of traffic)."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return False
        self._announce = loop.call_later(NOTIFY_EVERY, self._publish)
        return True

    def _publish(self) -> None:
        self._catch_up()
        self._announce = None
        if self.bus is not None:
            self.bus.publish(ActivityChanged(self.server, self._version))

    # --- reading ----------------------------------------------------------------------

    def entries(self, since: int = 0) -> list[Exchange]:
        """Exchanges added or changed after version ``since`` (all when 0), oldest first."""
        self._catch_up()
        changed = [e for e in self._entries.values() if e.version > since]
        for entry in changed:  # parse here (the runtime thread), not where it is shown
            _ = entry.message, entry.reply
        return changed

    def snapshot(self) -> list[Exchange]:
        self._catch_up()
        return list(self._entries.values())

    def clear(self) -> None:
        self._unread.clear()
        self._entries.clear()
        self._pending.clear()
        self._kept.clear()
        self._kept_bytes = 0


# --- the transport tap ---------------------------------------------------------------


class _TapRead:
    def __init__(self, inner: Any, log: ActivityLog) -> None:
        self._inner = inner
        self._log = log

    def _seen(self, item: Any) -> Any:
        message = getattr(item, "message", None)
        if message is not None:
            self._log.note("in", message)
        return item

    async def receive(self) -> Any:
        return self._seen(await self._inner.receive())

    def __aiter__(self) -> _TapRead:
        return self

    async def __anext__(self) -> Any:
        return self._seen(await self._inner.__anext__())

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _TapRead:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> bool | None:
        result: bool | None = await self._inner.__aexit__(*exc)
        return result

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class _TapWrite:
    def __init__(self, inner: Any, log: ActivityLog) -> None:
        self._inner = inner
        self._log = log

    async def send(self, item: Any, /) -> None:
        message = getattr(item, "message", None)
        if message is not None:
            self._log.note("out", message)
        await self._inner.send(item)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _TapWrite:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> bool | None:
        result: bool | None = await self._inner.__aexit__(*exc)
        return result

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def tapped(transport: Any, log: ActivityLog) -> Any:
    """``transport`` with every message recorded in ``log`` (same streams otherwise)."""

    @asynccontextmanager
    async def tap() -> AsyncIterator[tuple[Any, Any]]:
        async with transport as (read, write):
            yield _TapRead(read, log), _TapWrite(write, log)

    return tap()


# --- what a face shows -----------------------------------------------------------------


def mask_data(value: Any, key: str = "") -> Any:
    """A copy of JSON data with the values of secret-looking keys hidden."""
    if isinstance(value, dict):
        return {k: mask_data(v, str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [mask_data(v, key) for v in value]
    if isinstance(value, str):
        if key and key not in NOT_SECRET and is_secret_key(key):
            return HIDDEN if value else value
        if value.startswith(("http://", "https://")):
            return mask_url(value)
        return mask_text(value) if "://" in value else value
    return value


def mask_headers(headers: dict[str, str]) -> dict[str, str]:
    return {k: (HIDDEN if is_secret_key(k) and v else v) for k, v in headers.items()}


def _omitted(payload: Payload | None) -> dict[str, Any]:
    return {"omitted_bytes": payload.size if payload is not None else 0}


def masked(entry: Exchange) -> dict[str, Any]:
    """The exchange as JSON data with secrets masked (the Activity tab, the export)."""
    out: dict[str, Any] = {
        "seq": entry.seq,
        "server": entry.server,
        "time": entry.time,
        "direction": entry.direction,
        "kind": entry.kind,
        "method": entry.method,
        "id": entry.id,
        "status": entry.status,
        "duration_ms": None if entry.duration is None else round(entry.duration * 1000, 3),
        "size": entry.size,
        "reply_size": entry.reply_size,
    }
    if entry.caller:
        out["caller"] = entry.caller
    if entry.headers:
        out["headers"] = mask_headers(entry.headers)
    message = entry.message
    out["message"] = mask_data(message) if message is not None else _omitted(entry.payload)
    if entry.reply_payload is not None:
        reply = entry.reply
        out["reply"] = mask_data(reply) if reply is not None else _omitted(entry.reply_payload)
    return out


def json_lines(entries: Iterable[Exchange]) -> str:
    """The export format: one masked exchange per line."""
    return "".join(json.dumps(masked(e), ensure_ascii=False) + "\n" for e in entries)
