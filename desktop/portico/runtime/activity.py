"""Every JSON-RPC message between Portico and one server: a bounded ring in memory.

:func:`tapped` wraps a transport (an async context manager yielding the read and write
streams the SDK's client uses) so each message is recorded as it passes; nothing about
the messages changes. A request and its reply form one :class:`Exchange` (direction,
method, time, duration, size, status). :meth:`ActivityLog.watch_http` adds the HTTP
request headers of a Streamable HTTP / SSE server to the exchange they carried.

Secrets: an exchange keeps the messages as sent (the log lives in memory only, like the
session itself); :func:`masked` gives the copy any face shows or exports, with the values
of secret-looking keys and headers replaced. Runs on the runtime loop; no Qt here.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from portico.config.masking import HIDDEN, is_secret_key, mask_text, mask_url
from portico.runtime.events import ActivityChanged, EventBus
from portico.runtime.health import HealthRecorder

RING = 1000  # exchanges kept per server
MAX_KEPT_BYTES = 256 * 1024  # a bigger message is kept as a note of its size only
NOTIFY_EVERY = 0.1  # seconds: a burst of traffic is announced once per this interval
NOT_SECRET = frozenset({"progressToken", "nextCursor", "cursor"})

Direction = Literal["out", "in"]  # out: Portico -> server; in: server -> Portico
Kind = Literal["request", "notification", "response"]


@dataclass(frozen=True)
class Exchange:
    seq: int
    server: str
    direction: Direction  # who sent the first message
    kind: Kind  # "response": a reply whose request was not seen (kept anyway)
    method: str
    time: float  # time.time() of the first message
    size: int  # bytes of the first message's JSON
    id: str | None = None
    message: dict[str, Any] | None = None  # None when it was too big to keep
    reply: dict[str, Any] | None = None
    reply_size: int = 0
    duration: float | None = None  # seconds until the reply
    error: str | None = None  # the reply's error ("-32601 Method not found")
    headers: dict[str, str] = field(default_factory=dict)  # HTTP request headers
    version: int = 0  # the log's change counter when this exchange last changed

    @property
    def status(self) -> str:
        if self.kind == "notification":
            return ""
        if self.kind == "request" and self.duration is None:
            return "pending"
        return f"error {self.error}" if self.error else "ok"

    @property
    def total_size(self) -> int:
        return self.size + self.reply_size


def _dump(message: Any) -> tuple[dict[str, Any] | None, int]:
    """The message as JSON data and its size in bytes (data None when too big)."""
    raw = message.model_dump_json(by_alias=True, exclude_none=True)
    size = len(raw.encode("utf-8"))
    if size > MAX_KEPT_BYTES:
        return None, size
    data: dict[str, Any] = json.loads(raw)
    return data, size


def _error_text(data: dict[str, Any] | None) -> str | None:
    err = (data or {}).get("error")
    if not isinstance(err, dict):
        return None
    return f"{err.get('code')} {err.get('message', '')}".strip()


class ActivityLog:
    """The recent exchanges of one server (kept across reconnects)."""

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
        self.health = HealthRecorder(clock)
        self.listeners: list[Callable[[Exchange], None]] = [self.health.observe]

    # --- recording --------------------------------------------------------------------

    def record(self, direction: Direction, message: Any) -> Exchange | None:
        """One message passed (``message``: the SDK's JSONRPCMessage)."""
        try:
            data, size = _dump(message)
        except Exception:  # never let recording break the connection
            return None
        method = getattr(message, "method", None)
        raw_id = getattr(message, "id", None)
        msg_id = None if raw_id is None else str(raw_id)
        now = self._clock()
        if method is not None:
            kind: Kind = "request" if msg_id is not None else "notification"
            entry = self._add(
                direction, kind, str(method), now, size, msg_id, data if data else None
            )
            if kind == "request" and msg_id is not None:
                self._pending[(direction, msg_id)] = entry.seq
            return entry
        # a reply: to a request that went the other way
        asked: Direction = "in" if direction == "out" else "out"
        seq = self._pending.pop((asked, msg_id), None) if msg_id is not None else None
        request = self._entries.get(seq) if seq is not None else None
        if request is None:
            return self._add(direction, "response", "", now, size, msg_id, data)
        updated = replace(
            request,
            reply=data,
            reply_size=size,
            duration=max(0.0, now - request.time),
            error=_error_text(data),
            version=self._bump(),
        )
        self._entries[request.seq] = updated
        self._changed(updated)
        return updated

    def _add(
        self,
        direction: Direction,
        kind: Kind,
        method: str,
        now: float,
        size: int,
        msg_id: str | None,
        data: dict[str, Any] | None,
    ) -> Exchange:
        self._seq += 1
        entry = Exchange(
            seq=self._seq,
            server=self.server,
            direction=direction,
            kind=kind,
            method=method,
            time=now,
            size=size,
            id=msg_id,
            message=data,
            version=self._bump(),
        )
        self._entries[entry.seq] = entry
        while len(self._entries) > self.limit:
            _seq, old = self._entries.popitem(last=False)
            if old.id is not None:
                self._pending.pop((old.direction, old.id), None)
        self._changed(entry)
        return entry

    def attach_headers(self, body: bytes, headers: Iterable[tuple[str, str]]) -> None:
        """The HTTP request that carried the request ``body`` had these headers."""
        try:
            data = json.loads(body) if body else None
        except ValueError:
            return
        if not isinstance(data, dict) or data.get("id") is None:
            return
        seq = self._pending.get(("out", str(data["id"])))
        entry = self._entries.get(seq) if seq is not None else None
        if entry is not None:
            self._entries[entry.seq] = replace(entry, headers=dict(headers), version=self._bump())
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
        return self._version

    def _changed(self, entry: Exchange) -> None:
        for listener in list(self.listeners):
            with contextlib.suppress(Exception):  # a listener's bug never breaks the server
                listener(entry)
        if self.bus is None or self._announce is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._announce = loop.call_later(NOTIFY_EVERY, self._publish)

    def _publish(self) -> None:
        self._announce = None
        if self.bus is not None:
            self.bus.publish(ActivityChanged(self.server, self._version))

    # --- reading ----------------------------------------------------------------------

    def entries(self, since: int = 0) -> list[Exchange]:
        """Exchanges added or changed after version ``since`` (all when 0), oldest first."""
        return [e for e in self._entries.values() if e.version > since]

    def snapshot(self) -> list[Exchange]:
        return list(self._entries.values())

    def clear(self) -> None:
        self._entries.clear()
        self._pending.clear()


# --- the transport tap ---------------------------------------------------------------


class _TapRead:
    def __init__(self, inner: Any, log: ActivityLog) -> None:
        self._inner = inner
        self._log = log

    def _seen(self, item: Any) -> Any:
        message = getattr(item, "message", None)
        if message is not None:
            self._log.record("in", message)
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
            self._log.record("out", message)
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
    if entry.headers:
        out["headers"] = mask_headers(entry.headers)
    out["message"] = (
        mask_data(entry.message) if entry.message is not None else {"omitted_bytes": entry.size}
    )
    if entry.reply is not None or entry.reply_size:
        out["reply"] = (
            mask_data(entry.reply)
            if entry.reply is not None
            else {"omitted_bytes": entry.reply_size}
        )
    return out


def json_lines(entries: Iterable[Exchange]) -> str:
    """The export format: one masked exchange per line."""
    return "".join(json.dumps(masked(e), ensure_ascii=False) + "\n" for e in entries)
