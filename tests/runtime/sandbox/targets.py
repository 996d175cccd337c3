"""What the sandbox tests share: an HTTP target that says what it was asked, a proxy
client speaking raw HTTP over the proxy's Unix socket, the skips for a machine that
cannot sandbox (no bwrap, no user namespaces, no Landlock), a probe script that tries
what a sandbox must refuse, and a real connection to the prying test server."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from portico.config.model import Protocol, SandboxSpec, Scope, ServerSpec
from portico.runtime.connection import Connection
from portico.runtime.events import EventBus, Status
from portico.runtime.sandbox import probe
from portico.runtime.sandbox.bwrap import BwrapUnavailable, find_bwrap
from portico.runtime.sandbox.landlock import landlock_supported
from tests.helpers.specs import spec_for
from tests.runtime.conftest import REPO


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


# --- what the machine can sandbox with (each skip says why) --------------------------


def need_bwrap() -> Path:
    """The bwrap to use, or skip: none installed, or user namespaces are off here."""
    try:
        bwrap = find_bwrap()
    except BwrapUnavailable as exc:
        pytest.skip(f"no bwrap: {exc}")
    probe = subprocess.run(
        [str(bwrap), "--unshare-all", "--ro-bind", "/", "/", "true"], capture_output=True
    )
    if probe.returncode != 0:
        pytest.skip(f"user namespaces unavailable here: {probe.stderr.decode().strip()}")
    return bwrap


def need_landlock(abi: int = 1) -> int:
    """The kernel's Landlock ABI, or skip: no Landlock, or older than ``abi``."""
    found = landlock_supported()
    if found == 0:
        pytest.skip("this kernel has no Landlock (needs Linux 5.13+ with landlock in the LSMs)")
    if found < abi:
        pytest.skip(f"Landlock ABI {found} has no TCP rules (needs {abi})")
    return found


# --- a process that tries what a sandbox must refuse ----------------------------------


# argv: home project work port; prints "label ok" or "label refused ErrorName" per try
def forcing_method(name: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """For a fixture: the sandbox method ``name`` (bwrap, or Landlock with TCP rules) is
    the only one the probe may choose, asked afresh; skipped where it cannot run here."""
    if name == "bwrap":
        need_bwrap()
    else:
        need_landlock(4)  # TCP rules: without them the person would be asked first
    monkeypatch.setenv(probe.METHODS_ENV, name)
    probe.forget()
    yield name
    probe.forget()


PROBE = """
import os, socket, sys
home, project, work, port = sys.argv[1:5]
def attempt(label, fn):
    try:
        fn()
        print(label, "ok")
    except OSError as exc:
        print(label, "refused", type(exc).__name__)
attempt("home", lambda: open(home + "/secret.txt").read())
attempt("list-home", lambda: os.listdir(home))
attempt("project", lambda: open(project + "/notes.txt").read())
attempt("write-project", lambda: open(project + "/dropped.txt", "w").write("x"))
attempt("write-work", lambda: open(work + "/out.txt", "w").write("x"))
attempt("devnull", lambda: open("/dev/null", "w").write("x"))
attempt("dial", lambda: socket.create_connection(("127.0.0.1", int(port)), 2).close())
"""


def probe_layout(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(a home with secret.txt, a project with notes.txt, an empty work folder)."""
    home = tmp_path / "person-home"
    home.mkdir()
    (home / "secret.txt").write_text("do not read")
    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.txt").write_text("readable")
    work = tmp_path / "work"
    work.mkdir()
    return home, project, work


def probe_results(stdout: str) -> dict[str, str]:
    return dict(line.split(" ", 1) for line in stdout.splitlines())


# --- a real connection to the prying test server -------------------------------------

PRYING = REPO / "tests" / "servers" / "prying.py"


@asynccontextmanager
async def running(spec: ServerSpec) -> AsyncIterator[Connection]:
    conn = Connection(spec, bus=EventBus())
    await conn.start()
    try:
        state = await conn.wait_settled(60)
        assert state.status is Status.RUNNING, state.error
        yield conn
    finally:
        await conn.stop()


async def text(conn: Connection, tool: str, **args: object) -> str:
    result = await conn.call_tool(tool, dict(args))
    return "".join(getattr(block, "text", "") for block in result.content)


def prying(project: Path, **sandbox: object) -> ServerSpec:
    return spec_for(
        "prying",
        scope=Scope.PROJECT,
        project=project,
        command=sys.executable,
        args=[str(PRYING)],
        protocol=Protocol.LEGACY,
        connect_timeout=60.0,
        sandbox=SandboxSpec(**sandbox),  # type: ignore[arg-type]
    )
