"""Errors of the runtime and one helper that turns any failure into one clear line.

The SDK and its transports fail in many shapes: ``MCPError`` with a JSON-RPC code,
``httpx2`` errors, ``OSError`` from a spawn, ``TimeoutError``, and exception groups that
wrap any of these (an HTTP transport's background task dying). :func:`describe` picks the
most telling leaf and words it for a person; :class:`HttpErrorRecorder` remembers the last
HTTP error response so that the SDK's bare "Server returned an error response" can say
which status, method, URL and body it was.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

CONNECTION_CLOSED = -32000
REQUEST_TIMEOUT = -32001
BODY_PREVIEW = 200
SSE_LEGACY_LIMIT = 1024 * 1024
SSE_TOO_BIG = (
    "the server sent a message over 1 MiB, the most the MCP SDK's legacy SSE transport"
    " accepts per event; switch the server to Streamable HTTP (transport: http) if it offers it"
)


class RuntimeFailure(Exception):
    """A failure already worded for a person (server-scoped)."""


class NeedsAuth(Exception):
    """A server needs a sign-in that background work must not start.

    Raised by auth code (``hooks.auth_for(..., interactive=False)``); the connection then
    parks in ``Status.NEEDS_AUTH`` until someone signs in and retries.
    """


class ServerExited(RuntimeFailure):
    """A stdio server process ended (by itself, a crash, or a kill)."""

    def __init__(self, server: str, code: int | None, stderr_tail: list[str] | tuple[str, ...]):
        self.server = server
        self.code = code
        self.stderr_tail = tuple(stderr_tail)
        super().__init__(self._message())

    def _message(self) -> str:
        if self.code is None:
            text = "server exited"
        elif self.code < 0:
            text = f"server was killed by signal {-self.code}{_signal_name(-self.code)}"
        else:
            text = f"server exited (code {self.code})"
        if self.stderr_tail:
            text += "; last stderr lines:\n" + "\n".join(self.stderr_tail)
        return text


def _signal_name(number: int) -> str:
    import signal

    try:
        return f" ({signal.Signals(number).name})"
    except ValueError:
        return ""


class CommandNotFound(RuntimeFailure):
    """The stdio command is not on the PATH that was searched."""


class ConfigProblem(RuntimeFailure):
    """A server's config cannot be used as written (missing cert file, bad header...)."""


class SandboxProblem(ConfigProblem):
    """A sandboxed server cannot start as configured (no sandbox on this machine and
    nobody agreed to run it without one, or a network it cannot have yet). Like a
    missing secret, retrying alone cannot help: it fails once and waits for Retry."""


class SecretProblem(ConfigProblem):
    """A ``${keyring:NAME}`` / ``${env:NAME}`` reference has no value (or is malformed).
    Retrying cannot help until the person fixes it: the server fails once and waits for
    Retry (or a config change)."""


class CallTimeout(RuntimeFailure):
    """A tool call ran past its deadline (``timeout``, extended by progress)."""


@dataclass(frozen=True)
class HttpErrorResponse:
    status: int
    method: str
    url: str
    body: str
    challenge: str = ""  # the WWW-Authenticate header of a 401 / 403
    session: bool = False  # the request carried an Mcp-Session-Id (a Streamable HTTP session)

    @property
    def oauth_challenge(self) -> bool:
        """A 401 that asks for an OAuth bearer token (sign-in by discovery)."""
        return self.status == 401 and self.challenge.lower().startswith("bearer")

    def describe(self) -> str:
        body = self.body.strip().replace("\r", " ").replace("\n", " ")
        text = f"HTTP {self.status} from {self.method} {self.url}"
        if body:
            text += f": {body[:BODY_PREVIEW]}"
        return text


def _no_query(url: Any) -> str:
    """The URL without its query: some servers take tokens as ``?api_key=``, which must
    not reach logs or notices."""
    return str(url.copy_with(query=None)) if url.query else str(url)


class HttpErrorRecorder:
    """An httpx2 ``response`` event hook that remembers recent error responses."""

    def __init__(self, keep: int = 4) -> None:
        self.recent: deque[HttpErrorResponse] = deque(maxlen=keep)
        self.count = 0  # error responses seen so far (a mark for "since this call began")
        self.last_any: tuple[int, str, str] | None = None  # (status, method, url) of any answer
        # Told of every error response as it is recorded (the connection watches for a
        # server that forgot its session: runtime/session_renewal.py).
        self.on_error: Callable[[HttpErrorResponse], None] | None = None
        self.on_answer: Callable[[Any], None] | None = None  # every response (httpx2)

    async def __call__(self, response: Any) -> None:
        self.last_any = (
            response.status_code,
            response.request.method,
            _no_query(response.request.url),
        )
        if self.on_answer is not None:
            self.on_answer(response)
        if response.status_code < 400:
            return
        body = ""
        try:
            raw = await response.aread()
            body = raw[: BODY_PREVIEW * 4].decode("utf-8", "replace")
        except Exception:  # a body we cannot read still leaves status and URL
            body = ""
        request = response.request
        url = _no_query(request.url)
        challenge = response.headers.get("www-authenticate", "")
        session = bool(request.headers.get("mcp-session-id"))
        recorded = HttpErrorResponse(
            response.status_code, request.method, url, body, challenge, session
        )
        self.recent.append(recorded)
        self.count += 1
        if self.on_error is not None:
            self.on_error(recorded)

    def since(self, mark: int) -> list[HttpErrorResponse]:
        """The error responses recorded after ``count`` was ``mark`` (those still kept)."""
        newer = self.count - mark
        return list(self.recent)[-newer:] if newer > 0 else []

    @property
    def last(self) -> HttpErrorResponse | None:
        return self.recent[-1] if self.recent else None

    def clear(self) -> None:
        self.recent.clear()
        self.last_any = None


def leaves(exc: BaseException) -> list[BaseException]:
    """The non-group exceptions inside ``exc`` (itself if it is not a group)."""
    if isinstance(exc, BaseExceptionGroup):
        found: list[BaseException] = []
        for inner in exc.exceptions:
            found.extend(leaves(inner))
        return found
    return [exc]


def _rank(exc: BaseException) -> int:
    """Which leaf of a group explains the failure best (lower is better)."""
    import asyncio

    if isinstance(exc, RuntimeFailure | NeedsAuth):
        return 0
    if isinstance(exc, asyncio.CancelledError | GeneratorExit):
        return 9
    name = type(exc).__name__
    if name in {"ClosedResourceError", "BrokenResourceError", "EndOfStream"}:
        return 7
    return 3


def primary(exc: BaseException) -> BaseException:
    """The most telling leaf of ``exc``."""
    found = leaves(exc)
    return min(found, key=_rank) if found else exc


def describe(
    exc: BaseException,
    *,
    recorder: HttpErrorRecorder | None = None,
    transport: str | None = None,
    since: int = 0,
) -> str:
    """One clear message for any SDK / transport exception (groups included).

    ``since``: only HTTP error responses recorded after ``recorder.count`` was ``since``
    may explain this failure (an OAuth 401 before a successful sign-in must not).
    """
    leaf = primary(exc)
    text = _describe_leaf(leaf, transport=transport)
    last = recorder.last if recorder is not None and recorder.count > since else None
    if last is not None and (
        "Server returned an error response" in text
        or _is_http_status_error(leaf)
        or (last.status in (401, 403) and "HTTP" not in text)
    ):
        detail = last.describe()
        if detail.startswith(text):  # the same answer, now with its body
            text = detail + _advice(last.status)
        elif detail not in text:
            text = f"{text} ({detail})"
    return _reword_body(text, recorder)


def _advice(status: int) -> str:
    if status >= 500:
        return "; the server failed: try again later or look at its logs"
    if status == 404:
        return "; nothing at that address: check the url"
    if status == 405:
        return "; that address does not take MCP requests: check the url and transport"
    return ""


def _reword_body(text: str, recorder: HttpErrorRecorder | None) -> str:
    """The SDK's words for an answer that is not MCP, as one line with the URL."""
    answer = recorder.last_any if recorder is not None else None
    where = f"{answer[1]} {answer[2]} got HTTP {answer[0]}" if answer is not None else "the server"
    if text.startswith("Failed to parse JSON response") and "validation error" in text:
        detail = ""
        for line in text.splitlines()[1:]:
            line = line.strip()
            if line.startswith("Invalid JSON:"):
                detail = line.removeprefix("Invalid JSON:").split("[type=")[0].strip()
                break
        why = f" ({detail})" if detail else ""
        return (
            f"{where} with a body that is not valid JSON{why}; the server is broken or the"
            " url is not an MCP endpoint: check the url"
        )
    if text.startswith("Unexpected content type:"):
        kind = text.removeprefix("Unexpected content type:").strip() or "no content type"
        return (
            f"{where} with {kind}, not JSON or an event stream; the url is probably a web"
            " page (a login page, a proxy), not an MCP endpoint: check the url"
        )
    return text


def _is_http_status_error(exc: BaseException) -> bool:
    return type(exc).__name__ == "HTTPStatusError"


def _describe_leaf(exc: BaseException, *, transport: str | None) -> str:
    import asyncio

    from mcp import MCPError

    if isinstance(exc, RuntimeFailure | NeedsAuth):
        return str(exc)
    if isinstance(exc, MCPError):
        message = exc.error.message if exc.error is not None else str(exc)
        if exc.error is not None and exc.error.code == REQUEST_TIMEOUT:
            return f"request timed out ({message})"
        if "exceeded the" in message and "byte limit" in message and transport == "sse":
            return SSE_TOO_BIG
        return message
    if isinstance(exc, TimeoutError | asyncio.TimeoutError):
        return str(exc) or "timed out"
    if isinstance(exc, FileNotFoundError):
        return f"{exc.strerror or 'not found'}: {exc.filename}"
    if isinstance(exc, PermissionError):
        return f"permission denied: {exc.filename}"
    name = type(exc).__name__
    if name == "SSEError" and transport == "sse":
        return SSE_TOO_BIG if "byte limit" in str(exc) else f"SSE stream failed: {exc}"
    if name == "HTTPStatusError":
        response = getattr(exc, "response", None)
        if response is not None:
            request = response.request
            return f"HTTP {response.status_code} from {request.method} {_no_query(request.url)}"
    if name in {"ConnectError", "ConnectTimeout"}:
        request = getattr(exc, "_request", None)
        where = f" to {_no_query(request.url)}" if request is not None else ""
        return f"cannot connect{where}: {exc or name}"
    if name in {"ClosedResourceError", "BrokenResourceError", "EndOfStream"}:
        return "Connection closed"
    text = str(exc)
    return f"{name}: {text}" if text else name
