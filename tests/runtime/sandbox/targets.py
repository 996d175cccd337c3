"""Peers for the network proxy tests: an HTTP target that says what it was asked, and a
proxy client speaking raw HTTP over the proxy's Unix socket."""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Target:
    """A plain HTTP/1.1 server on loopback; its body echoes the request line and Host."""

    host: str
    port: int
    connections: list[str] = field(default_factory=list)


@asynccontextmanager
async def http_target(host: str = "127.0.0.1") -> AsyncIterator[Target]:
    target = Target(host, 0)

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        target.connections.append(host)
        try:
            while True:
                head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
                lines = head.split("\r\n")
                fields = dict(
                    (k.strip().lower(), v.strip())
                    for k, _, v in (line.partition(":") for line in lines[1:] if line)
                )
                body = int(fields.get("content-length", "0") or 0)
                payload = await reader.readexactly(body) if body else b""
                reply = f"{lines[0]}|host={fields.get('host')}|body={payload.decode()}".encode()
                closing = fields.get("connection", "").lower() == "close"
                writer.write(
                    b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                    + f"Content-Length: {len(reply)}\r\n".encode()
                    + (b"Connection: close\r\n" if closing else b"")
                    + b"\r\n"
                    + reply
                )
                await writer.drain()
                if closing:
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(answer, host, 0)
    target.port = server.sockets[0].getsockname()[1]
    try:
        yield target
    finally:
        server.close()
        await server.wait_closed()


@contextlib.contextmanager
def short_dir() -> Iterator[Path]:
    """A directory under /tmp whose socket paths fit sun_path (pytest's tmp_path can be long)."""
    with tempfile.TemporaryDirectory(prefix="np-", dir="/tmp") as name:
        yield Path(name)


async def proxy_request(socket_path: Path, request: bytes) -> tuple[bytes, bytes]:
    """Send one raw request to the proxy; (status line, everything after the head)."""
    reader, writer = await asyncio.open_unix_connection(str(socket_path))
    try:
        writer.write(request)
        await writer.drain()
        head = await reader.readuntil(b"\r\n\r\n")
        rest = await asyncio.wait_for(reader.read(), 10)
    finally:
        writer.close()
    return head.split(b"\r\n", 1)[0], rest


async def connect_tunnel(
    socket_path: Path, authority: str
) -> tuple[bytes, asyncio.StreamReader, asyncio.StreamWriter]:
    """CONNECT through the proxy: (status line, the tunnel's streams)."""
    reader, writer = await asyncio.open_unix_connection(str(socket_path))
    writer.write(f"CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n\r\n".encode())
    await writer.drain()
    head = await reader.readuntil(b"\r\n\r\n")
    return head.split(b"\r\n", 1)[0], reader, writer
