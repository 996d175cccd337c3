"""The filtering proxy a sandboxed server's traffic goes through (asyncio, no Qt).

It listens on a Unix socket, which is the one thing that crosses into a sandbox with no
network (the in-sandbox bridge turns it back into 127.0.0.1:port). It speaks HTTP proxy:
`CONNECT host:port` opens a tunnel (HTTPS and anything else over TCP), an absolute-form
`GET http://host/...` is forwarded as one request on an upstream connection of its
own, its body delimited (Content-Length or chunked), and each request pipelined after it
is checked in turn (never pumped raw to the first one's host). A host the filter does not allow gets
403 and is never resolved; `on_blocked(host, port)` hears of it once per (host, port), so
the caller can log it and offer to allow it. In observe mode nothing is refused and
`on_blocked` hears of each host the filter would have refused.

A declared *name* is resolved here and dialled at the addresses found (never looked up
twice), and refused when one is loopback, link-local, unspecified, multicast or on a
private network (RFC 1918, carrier-grade NAT, IPv6 unique-local): a name
whose DNS someone else controls must not lead back to this machine's own services or a
cloud metadata endpoint. `localhost` (and `*.localhost`) and IP literals are exempt: they
say what they reach.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import os
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from portico.runtime.sandbox.hostfilter import (
    HostEntryError,
    HostFilter,
    entry_for,
    normalise_host,
    split_authority,
)

__all__ = [
    "HostEntryError",
    "HostFilter",
    "ProxyHandle",
    "Resolver",
    "entry_for",
    "start_proxy",
]

logger = logging.getLogger(__name__)

OnBlocked = Callable[[str, int], None]
# (host, port) -> the addresses it resolves to; raises OSError when it does not resolve.
Resolver = Callable[[str, int], Awaitable[list[str]]]

MAX_HEAD_BYTES = 64 * 1024
HEAD_TIMEOUT = 30.0
CONNECT_TIMEOUT = 15.0
CHUNK = 64 * 1024
# sun_path is 108 bytes on Linux, 104 on macOS, NUL included.
MAX_SOCKET_PATH = 103
PENDING_SUFFIX = ".new"
HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-connection",
        "proxy-authorization",
        "proxy-authenticate",
        "te",
        "trailer",
        "upgrade",
    }
)


async def system_resolver(host: str, port: int) -> list[str]:
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    found: list[str] = []
    for *_rest, sockaddr in infos:
        if str(sockaddr[0]) not in found:
            found.append(str(sockaddr[0]))
    return found


@dataclass
class _Rules:
    filter: HostFilter
    on_blocked: OnBlocked
    observe: bool
    resolver: Resolver
    seen: dict[tuple[str, int], bool] = field(default_factory=dict)


class _Refusal(Exception):
    def __init__(self, status: int, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.reason = reason
        self.detail = detail


class ProxyHandle:
    """A running proxy: where it listens, what it saw; `close()` stops it.

    It lives on the loop that started it: call its methods there, and `on_blocked` is
    called there too.
    """

    def __init__(self, socket_path: Path, rules: _Rules) -> None:
        self.socket_path = socket_path
        self.observe = rules.observe
        self._rules = rules
        self._seen = rules.seen
        self._tasks: set[asyncio.Task[None]] = set()
        self._server: asyncio.Server | None = None

    @property
    def seen(self) -> dict[tuple[str, int], bool]:
        """Every (host, port) asked for, and whether the filter allows it."""
        return dict(self._seen)

    @property
    def blocked(self) -> frozenset[tuple[str, int]]:
        """The (host, port) pairs the filter refuses (in observe mode: would refuse)."""
        return frozenset(key for key, allowed in self._seen.items() if not allowed)

    @property
    def filter(self) -> HostFilter:
        return self._rules.filter

    def replace_filter(self, filter: HostFilter) -> None:
        """New rules for the requests that come next (a person allowed a host): open
        tunnels stay, and each host refused under the new rules is reported once again."""
        self._rules.filter = filter
        self._seen.clear()

    async def close(self) -> None:
        if self._server is None:
            return
        self._server.close()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._server.wait_closed()
        self._server = None
        with contextlib.suppress(FileNotFoundError):
            self.socket_path.unlink()

    async def _listen(self) -> None:
        self._server = await asyncio.start_unix_server(
            self._serve, sock=_bound_socket(self.socket_path), limit=MAX_HEAD_BYTES
        )

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            await _serve_one(reader, writer, self._rules)
        except asyncio.CancelledError:
            # close() ends open tunnels this way; a connection task that ends cancelled
            # makes asyncio's stream callback log an error (3.11), so it ends quietly.
            pass
        finally:
            self._tasks.discard(task)


async def start_proxy(
    socket_path: str | os.PathLike[str],
    filter: HostFilter,
    on_blocked: OnBlocked,
    *,
    observe: bool = False,
    resolver: Resolver | None = None,
) -> ProxyHandle:
    """Listen on `socket_path` (created 0600; a stale socket there is replaced)."""
    path = _socket_place(Path(socket_path))
    rules = _Rules(filter, on_blocked, observe, resolver or system_resolver)
    handle = ProxyHandle(path, rules)
    await handle._listen()
    return handle


def _socket_place(path: Path) -> Path:
    size = len(os.fsencode(path)) + len(PENDING_SUFFIX)
    if size > MAX_SOCKET_PATH:
        raise ValueError(
            f"proxy socket path is {size - len(PENDING_SUFFIX)} bytes, longer than a Unix "
            f"socket allows ({MAX_SOCKET_PATH - len(PENDING_SUFFIX)} here): {path}"
        )
    if path.exists() and not path.is_socket():
        raise ValueError(f"proxy socket path is taken by something else: {path}")
    return path


def _bound_socket(path: Path) -> socket.socket:
    """A socket listening at `path`, mode 0600 before anyone can see it there.

    Bound under a pending name, chmod-ed, then renamed over `path` (which also replaces a
    stale socket atomically); the process umask is never touched, since other threads
    create files meanwhile.
    """
    pending = f"{path}{PENDING_SUFFIX}"
    with contextlib.suppress(FileNotFoundError):
        os.unlink(pending)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(pending)
        os.chmod(pending, 0o600)
        os.replace(pending, path)
        sock.listen(128)
    except BaseException:
        sock.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(pending)
        raise
    return sock


async def _serve_one(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    rules: _Rules,
) -> None:
    """One client connection: a CONNECT tunnel, or plain HTTP requests one after the
    other (pipelined ones included), each checked against the filter and sent upstream
    on a connection of its own with its body and nothing more."""
    upstream: asyncio.StreamWriter | None = None
    try:
        while True:
            try:
                head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), HEAD_TIMEOUT)
            except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError):
                return
            try:
                method, raw_host, port, forward = _parse_head(head)
                host = normalise_host(raw_host) or raw_host.lower()
                allowed = rules.filter.allows(host, port)
                first = (host, port) not in rules.seen
                rules.seen[(host, port)] = allowed
                if not allowed and first:
                    _report(rules.on_blocked, host, port)
                if not allowed and not rules.observe:
                    raise _Refusal(
                        403,
                        "Forbidden",
                        f"{host}:{port} is not in this server's sandbox network allow list",
                    )
                body = _body_kind(head) if method != "CONNECT" else 0
                up_reader, upstream = await _dial(host, port, rules.resolver)
            except _Refusal as refusal:
                await _answer(writer, refusal)
                return
            if method == "CONNECT":
                writer.write(b"HTTP/1.1 200 Connection Established\r\n\r\n")
                await writer.drain()
                await asyncio.gather(_pump(reader, upstream), _pump(up_reader, writer))
                return
            upstream.write(forward)
            await _copy_body(reader, upstream, body)
            # its answer alone: an upstream that keeps the connection open anyway must not
            # hold the requests pipelined after it
            closing = await _relay_response(up_reader, writer, method)
            upstream.close()
            with contextlib.suppress(Exception):
                await upstream.wait_closed()
            upstream = None
            if closing or _says_close(head):
                return
    except (ConnectionError, OSError, asyncio.IncompleteReadError, _Refusal):
        pass
    finally:
        for stream in (writer, upstream):
            if stream is not None:
                stream.close()
                with contextlib.suppress(Exception):
                    await stream.wait_closed()


CHUNKED = -1


def _says_close(head: bytes) -> bool:
    """HTTP/1.0, or a ``Connection: close`` header: the connection ends after this."""
    lines = head.decode("latin-1").split("\r\n")
    if lines[0].startswith("HTTP/1.0") or lines[0].endswith("HTTP/1.0"):
        return True
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "connection" and "close" in value.lower():
            return True
    return False


async def _relay_response(
    up_reader: asyncio.StreamReader, writer: asyncio.StreamWriter, method: str
) -> bool:
    """One response: its head (after any 1xx ones), then its body as framed, or up to
    the end of the connection when it says no length. True when the client was told
    the connection closes after it."""
    while True:
        head = await asyncio.wait_for(up_reader.readuntil(b"\r\n\r\n"), HEAD_TIMEOUT)
        writer.write(head)
        try:
            status = int(head.split(b" ", 2)[1])
        except (IndexError, ValueError):
            raise _Refusal(502, "Bad Gateway", "not an HTTP response") from None
        if not 100 <= status < 200:
            break
    if method == "HEAD" or status in (204, 304):
        await writer.drain()
        return _says_close(head)
    names = {line.partition(b":")[0].strip().lower() for line in head.split(b"\r\n")[1:]}
    if not names & {b"content-length", b"transfer-encoding"}:
        await _pump(up_reader, writer, end=False)
        return True
    await _copy_body(up_reader, writer, _body_kind(head))
    return _says_close(head)


def _body_kind(head: bytes) -> int:
    """The request body's length, or CHUNKED (raises _Refusal for one it cannot tell)."""
    length: int | None = None
    chunked = False
    for line in head.decode("latin-1").split("\r\n")[1:]:
        name, _, value = line.partition(":")
        name = name.strip().lower()
        if name == "content-length":
            if not value.strip().isdigit() or (length is not None and int(value) != length):
                raise _Refusal(400, "Bad Request", "a bad or repeated Content-Length")
            length = int(value)
        elif name == "transfer-encoding":
            codings = [c.strip().lower() for c in value.split(",")]
            if codings[-1:] != ["chunked"]:
                raise _Refusal(400, "Bad Request", f"Transfer-Encoding {value.strip()!r}")
            chunked = True
    if chunked and length is not None:
        # both: the classic request smuggling shape
        raise _Refusal(400, "Bad Request", "both Content-Length and Transfer-Encoding")
    return CHUNKED if chunked else (length or 0)


async def _copy_body(
    reader: asyncio.StreamReader, upstream: asyncio.StreamWriter, kind: int
) -> None:
    """Exactly the request's body, so what follows it is read as the next request."""
    if kind == CHUNKED:
        while True:
            size_line = await reader.readuntil(b"\r\n")
            upstream.write(size_line)
            try:
                size = int(size_line.split(b";", 1)[0].strip(), 16)
            except ValueError:
                raise _Refusal(400, "Bad Request", "a bad chunk size") from None
            if size == 0:
                while (trailer := await reader.readuntil(b"\r\n")) != b"\r\n":
                    upstream.write(trailer)
                upstream.write(b"\r\n")
                break
            upstream.write(await reader.readexactly(size + 2))
            await upstream.drain()
    else:
        left = kind
        while left:
            data = await reader.read(min(CHUNK, left))
            if not data:
                raise asyncio.IncompleteReadError(b"", left)
            upstream.write(data)
            left -= len(data)
            await upstream.drain()
    await upstream.drain()


def _parse_head(head: bytes) -> tuple[str, str, int, bytes]:
    """(method, host, port, the request to send upstream: empty for CONNECT)."""
    try:
        text = head.decode("latin-1")
        request_line, *header_lines = text[:-4].split("\r\n")
        method, target, version = request_line.split(" ")
    except ValueError:
        raise _Refusal(400, "Bad Request", "not an HTTP proxy request") from None
    if not version.startswith("HTTP/1."):
        raise _Refusal(505, "HTTP Version Not Supported", f"{version} is not HTTP/1.x")
    if method == "CONNECT":
        try:
            host, port = split_authority(target)
        except ValueError:
            host, port = "", None
        if not host or port is None:
            raise _Refusal(400, "Bad Request", f"CONNECT needs host:port, got {target!r}")
        return method, host, port, b""
    try:
        parts = urlsplit(target)
        port = parts.port or 80
    except ValueError:
        raise _Refusal(400, "Bad Request", f"not a URL: {target!r}") from None
    if parts.scheme.lower() != "http" or not parts.hostname:
        raise _Refusal(
            400, "Bad Request", f"a proxy request needs an http:// URL or CONNECT, got {target!r}"
        )
    host = parts.hostname
    authority = parts.netloc.rsplit("@", 1)[-1]
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    headers = [f"{method} {path} {version}", f"Host: {authority}"]
    dropped = set(HOP_BY_HOP)
    for line in header_lines:
        name = line.split(":", 1)[0].strip().lower()
        if name == "connection":
            dropped.update(token.strip().lower() for token in line.split(":", 1)[-1].split(","))
    for line in header_lines:
        name = line.split(":", 1)[0].strip().lower()
        if name not in dropped and name != "host":
            headers.append(line)
    headers.append("Connection: close")
    return method, host, port, ("\r\n".join(headers) + "\r\n\r\n").encode("latin-1")


async def _dial(
    host: str, port: int, resolver: Resolver
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    addresses = await _addresses(host, port, resolver)
    failure = ""
    for address in addresses:
        try:
            return await asyncio.wait_for(asyncio.open_connection(address, port), CONNECT_TIMEOUT)
        except TimeoutError:
            failure = "it did not answer"
        except OSError as exc:
            failure = exc.strerror or type(exc).__name__
    raise _Refusal(502, "Bad Gateway", f"cannot reach {host}:{port}: {failure}")


async def _addresses(host: str, port: int, resolver: Resolver) -> list[str]:
    """Where to dial `host`: itself if it is an address, else what it resolves to."""
    if _is_address(host):
        return [host]
    try:
        found = await asyncio.wait_for(resolver(host, port), CONNECT_TIMEOUT)
    except (OSError, TimeoutError) as exc:
        raise _Refusal(502, "Bad Gateway", f"cannot resolve {host}: {exc}") from None
    if not found:
        raise _Refusal(502, "Bad Gateway", f"cannot resolve {host}: no addresses")
    if host != "localhost" and not host.endswith(".localhost"):
        for address in found:
            kind = _local_kind(address)
            if kind:
                raise _Refusal(
                    403,
                    "Forbidden",
                    f"{host} resolves to {address}, {kind}; a declared name may not lead "
                    "there (declare the address itself to allow it)",
                )
    return found


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _local_kind(address: str) -> str | None:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_loopback:
        return "a loopback address"
    if ip.is_link_local:
        return "a link-local address"
    if ip.is_unspecified:
        return "an unspecified address"
    if ip.is_multicast:
        return "a multicast address"
    if ip.is_private or ip in _SHARED:
        # a declared name whose DNS someone else controls must not lead into the
        # person's own network (their router, a NAS, a service bound to 0.0.0.0)
        return "a private network address"
    return None


_SHARED = ipaddress.ip_network("100.64.0.0/10")  # carrier-grade NAT, not "private" to Python


async def _answer(writer: asyncio.StreamWriter, refusal: _Refusal) -> None:
    body = f"portico sandbox: {refusal.detail}\n".encode()
    writer.write(
        f"HTTP/1.1 {refusal.status} {refusal.reason}\r\n"
        f"Content-Type: text/plain; charset=utf-8\r\nContent-Length: {len(body)}\r\n"
        "Connection: close\r\n\r\n".encode("ascii")
        + body
    )
    with contextlib.suppress(ConnectionError):
        await writer.drain()


async def _pump(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *, end: bool = True
) -> None:
    """Copy until ``reader`` ends; then half-close ``writer`` (unless ``end`` is False)."""
    try:
        while data := await reader.read(CHUNK):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        with contextlib.suppress(OSError, RuntimeError):
            if end and writer.can_write_eof() and not writer.is_closing():
                writer.write_eof()


def _report(on_blocked: OnBlocked, host: str, port: int) -> None:
    try:
        on_blocked(host, port)
    except Exception:
        logger.exception("the sandbox proxy's on_blocked callback failed for %s:%d", host, port)
