"""The endpoint's fast path: a plain 2026-07-28 ``tools/call`` or ``tools/list`` answered
without the SDK server's per-request machinery (Starlette routing, the session manager,
the task group and memory stream of its SSE mode, the middleware chain), which costs
more CPU than the gateway's own work.

Only the common case is served here, checked with the SDK's own functions: the
``MCP-Protocol-Version`` header names a 2026-07-28-era revision; the body is one
JSON-RPC request (``jsonrpc``, an ``id``) of one of those two methods whose routing
headers and ``_meta`` envelope pass :func:`classify_inbound_request`, whose params pass
the revision's schema, and whose ``Mcp-Param-*`` headers agree with the arguments; the
``Accept`` header takes JSON and SSE. Everything else goes on to the SDK with the body
it read (initialize, sessions and the handshake era, notifications, SSE streams, every
error the SDK words): also a call that asked for progress or log lines (they ride an SSE
stream), a retry carrying ``requestState`` (an elicitation/sampling round), and
``tool_search`` (its list-changed notification). The answer is what the SDK would send:
the same result (``serialize_server_result``, ``resultType``, the ``serverInfo`` stamp),
JSON-RPC errors with the status the SDK maps them to; a client that closes the
response stream cancels the call, and a call silent for :data:`PING_SECONDS` turns
into an SSE stream with keep-alive comments, as the SDK's does.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp.server.connection import Connection
from mcp.server.runner import modern_error_data
from mcp.shared.inbound import (
    ERROR_CODE_HTTP_STATUS,
    MCP_PARAM_HEADER_PREFIX,
    InboundModernRoute,
    classify_inbound_request,
    find_duplicated_routing_header,
    validate_mcp_param_headers,
)
from mcp_types import LOG_LEVEL_META_KEY, SERVER_INFO_META_KEY
from mcp_types import methods as _methods
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from portico.gateway.access import CLIENT_KEY
from portico.gateway.clients import Client
from portico.gateway.forwarding import Leg
from portico.runtime.toolsearch import TOOL_SEARCH

if TYPE_CHECKING:
    from portico.gateway.server import Gateway

log = logging.getLogger(__name__)

METHODS = frozenset({"tools/call", "tools/list"})
PING_SECONDS = 15.0  # as the SDK's: a silent call's stream gets a comment this often
_MODERN = frozenset(v.encode("latin-1") for v in MODERN_PROTOCOL_VERSIONS)
_PARAM_PREFIX = MCP_PARAM_HEADER_PREFIX.lower().encode("latin-1")
_SSE_HEADERS = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache, no-transform"),
    (b"connection", b"keep-alive"),
    (b"x-accel-buffering", b"no"),
]


class FastPath:
    def __init__(self, app: ASGIApp, gateway: Gateway, path: str) -> None:
        self.app = app
        self.gateway = gateway
        self.path = path
        self.ping_seconds = PING_SECONDS
        self.served = 0  # requests answered here (the rest went on to the SDK)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope["method"] != "POST"
            or scope["path"] != self.path
            or not _worth_reading(scope["headers"])
        ):
            await self.app(scope, receive, send)
            return
        body, more = await _body(receive)
        if more is not None:  # the client went away while sending
            return
        replay = _Replay(body, receive)
        plan = self._plan(scope, body)
        if plan is None:
            await self.app(scope, replay, send)
            return
        self.served += 1
        await _answer(plan, replay, send, self)

    def _plan(self, scope: Scope, body: bytes) -> _Call | None:
        """What this request is, if the fast path serves it; None: the SDK does."""
        state = scope.get("state")
        client = state.get(CLIENT_KEY) if isinstance(state, dict) else None
        if not isinstance(client, Client):
            return None
        try:
            decoded = json.loads(body)
        except (ValueError, RecursionError):
            return None
        if not isinstance(decoded, dict) or decoded.get("jsonrpc") != "2.0":
            return None
        request_id = decoded.get("id")
        method = decoded.get("method")
        params = decoded.get("params")
        if (
            not isinstance(request_id, str | int)
            or isinstance(request_id, bool)
            or method not in METHODS
            or not isinstance(params, dict)
            or method in self.gateway.server.cache_hints
        ):
            return None
        raw = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in scope["headers"]]
        if (
            not _accepts(raw)
            or not _sends_json(raw)
            or find_duplicated_routing_header(raw) is not None
        ):
            return None
        headers = dict(raw)
        verdict = classify_inbound_request(decoded, headers=headers)
        if not isinstance(verdict, InboundModernRoute):
            return None
        meta = params.get("_meta")
        if not isinstance(meta, dict) or "progressToken" in meta or LOG_LEVEL_META_KEY in meta:
            return None  # progress and log lines ride an SSE stream: the SDK's
        version = verdict.protocol_version
        try:
            _methods.validate_client_request(method, version, params)
        except Exception:  # the SDK words the error
            return None
        if method == "tools/list":
            return _Call(request_id, version, self._list(client))
        name = params.get("name")
        arguments = params.get("arguments")
        if (
            not isinstance(name, str)
            or name == TOOL_SEARCH
            or "requestState" in params
            or "inputResponses" in params
            or (arguments is not None and not isinstance(arguments, dict))
        ):
            return None
        if arguments or any(k.startswith(MCP_PARAM_HEADER_PREFIX.lower()) for k in headers):
            schema = self.gateway.input_schema(name)
            if schema is not None and validate_mcp_param_headers(schema, arguments or {}, headers):
                return None  # a header that disagrees with the arguments: the SDK's 400
        typed = types.CallToolRequestParams.model_validate(params, by_name=False)
        leg = Leg(None, _declared(verdict))
        return _Call(request_id, version, lambda: self.gateway.call_tool(client, typed, leg))

    def _list(self, client: Client) -> Callable[[], Awaitable[Any]]:
        async def run() -> types.ListToolsResult:
            return self.gateway.list_tools(client)

        return run


class _Call:
    """A request the fast path serves: its id, revision and what answers it."""

    def __init__(
        self, request_id: str | int, version: str, run: Callable[[], Awaitable[Any]]
    ) -> None:
        self.request_id = request_id
        self.version = version
        self.run = run


def _worth_reading(headers: list[tuple[bytes, bytes]]) -> bool:
    """A 2026-07-28-era request whose Mcp-Method (when sent) is one served here: only
    then is the body read before the SDK gets it."""
    version = method = None
    for key, value in headers:
        if key == b"mcp-protocol-version":
            version = value
        elif key == b"mcp-method":
            method = value
    return version in _MODERN and (method is None or method.decode("latin-1") in METHODS)


def _accepts(headers: list[tuple[str, str]]) -> bool:
    """The Accept header takes both JSON and SSE (as the SDK's SSE mode requires)."""
    wanted = ",".join(v for k, v in headers if k == "accept")
    kinds = {part.split(";")[0].strip().lower() for part in wanted.split(",")}
    if "*/*" in kinds:
        return True
    return bool(kinds & {"application/json", "application/*"}) and bool(
        kinds & {"text/event-stream", "text/*"}
    )


def _sends_json(headers: list[tuple[str, str]]) -> bool:
    """The body says it is JSON (else the SDK refuses it), read as the SDK reads it:
    the first Content-Type header, its media types before any parameter."""
    sent = next((v for k, v in headers if k == "content-type"), "")
    return "application/json" in (part.strip() for part in sent.split(";")[0].split(","))


def _declared(verdict: InboundModernRoute) -> Callable[[types.ClientCapabilities], bool]:
    """What the request's envelope declared, checked as the SDK checks a session's."""
    caps = verdict.client_capabilities
    if not isinstance(caps, dict) or not ({"elicitation", "sampling"} & caps.keys()):
        return lambda _capability: False  # the only ones the forwarder asks about
    connection = Connection.from_envelope(verdict.protocol_version, verdict.client_info, caps)
    return connection.check_capability


async def _body(receive: Receive) -> tuple[bytes, Message | None]:
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"", message
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks), None


class _Replay:
    """``receive`` for the SDK after the fast path read the body: the body again, then
    the client's own (its disconnect)."""

    def __init__(self, body: bytes, receive: Receive) -> None:
        self._body: bytes | None = body
        self._receive = receive

    async def __call__(self) -> Message:
        if self._body is not None:
            body, self._body = self._body, None
            return {"type": "http.request", "body": body, "more_body": False}
        return await self._receive()


def _reply(call: _Call, outcome: Any, stamp: dict[str, Any]) -> tuple[int, bytes]:
    """The HTTP status and JSON-RPC body for ``outcome`` (a result, or the exception the
    call raised), shaped as the SDK's modern entry shapes them."""
    if isinstance(outcome, Exception):
        return _error(call, modern_error_data(outcome))
    dumped = outcome.model_dump(by_alias=True, mode="json", exclude_none=True)
    method = "tools/list" if isinstance(outcome, types.ListToolsResult) else "tools/call"
    try:
        dumped = _methods.serialize_server_result(method, call.version, dumped)
    except Exception:
        log.exception("gateway: the fast path's %s result is invalid", method)
        invalid = "Handler returned an invalid result"
        return _error(call, types.ErrorData(code=types.INTERNAL_ERROR, message=invalid))
    if dumped.get("resultType") is None:
        dumped["resultType"] = "complete"
    meta = dumped.get("_meta")
    if not isinstance(meta, dict):
        dumped["_meta"] = {SERVER_INFO_META_KEY: stamp}
    elif meta.get(SERVER_INFO_META_KEY) is None:
        dumped["_meta"] = {**meta, SERVER_INFO_META_KEY: stamp}
    return 200, _encode({"jsonrpc": "2.0", "id": call.request_id, "result": dumped})


def _error(call: _Call, error: types.ErrorData) -> tuple[int, bytes]:
    data = error.model_dump(by_alias=True, mode="json", exclude_none=True)
    status = ERROR_CODE_HTTP_STATUS.get(error.code, 200)
    return status, _encode({"jsonrpc": "2.0", "id": call.request_id, "error": data})


def _encode(body: dict[str, Any]) -> bytes:
    return json.dumps(body, separators=(",", ":")).encode("utf-8")


def _outcome(task: asyncio.Future[Any]) -> Any:
    if task.cancelled():
        return RuntimeError("the call was cancelled")
    return task.exception() or task.result()


async def _answer(call: _Call, receive: Receive, send: Send, fast: FastPath) -> None:
    """Run the call and send its answer: JSON if it ends within ``fast.ping_seconds``,
    else an SSE stream pinged until it does. The client closing the connection
    cancels it (the 2026-07-28 way to cancel a request)."""
    task = asyncio.ensure_future(call.run())
    gone = asyncio.ensure_future(_disconnected(receive))
    wait = fast.ping_seconds
    try:
        done, _ = await asyncio.wait(
            (task, gone), timeout=wait, return_when=asyncio.FIRST_COMPLETED
        )
        if task in done:
            status, body = _reply(call, _outcome(task), fast.gateway.server.server_info_stamp)
            headers = [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode("ascii")),
            ]
            await send({"type": "http.response.start", "status": status, "headers": headers})
            await send({"type": "http.response.body", "body": body})
            return
        if gone in done:
            return
        await send({"type": "http.response.start", "status": 200, "headers": _SSE_HEADERS})
        while True:
            await send({"type": "http.response.body", "body": b": ping\r\n\r\n", "more_body": True})
            done, _ = await asyncio.wait(
                (task, gone), timeout=wait, return_when=asyncio.FIRST_COMPLETED
            )
            if task in done:
                _status, body = _reply(call, _outcome(task), fast.gateway.server.server_info_stamp)
                event = b"event: message\r\ndata: " + body + b"\r\n\r\n"
                await send({"type": "http.response.body", "body": event, "more_body": False})
                return
            if gone in done:
                return
    finally:
        gone.cancel()
        if not task.done():
            task.cancel()
            with contextlib.suppress(BaseException):
                await task


async def _disconnected(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass
