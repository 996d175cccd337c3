"""Runtime test helpers: ServerSpec builder, toolbox servers over HTTP / SSE on 127.0.0.1."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from portico.config.model import Dialect, Scope, ServerSpec, Source, Transport
from portico.runtime.events import Event, EventBus, Status, StatusChanged

REPO = Path(__file__).resolve().parents[2]
TOOLBOX = REPO / "tests" / "servers" / "toolbox.py"
EVERYTHING = (
    REPO
    / "tests"
    / "peers"
    / "node_modules"
    / "@modelcontextprotocol"
    / ("server-everything/dist/index.js")
)
NODE = REPO / "tests" / "peers" / "node_modules" / ".bin" / "node"


def make_spec(
    name: str = "toolbox", transport: str | Transport = "stdio", **fields: Any
) -> ServerSpec:
    """A ServerSpec as the config loader would build it (times in seconds)."""
    source = Source(path=Path("/tests/mcp.toml"), line=1, scope=Scope.GLOBAL, dialect=Dialect.TOML)
    for key in ("args", "env", "headers"):
        if key in fields and isinstance(fields[key], dict):
            fields[key] = tuple(fields[key].items())
        elif key in fields and isinstance(fields[key], list):
            fields[key] = tuple(fields[key])
    return ServerSpec(name=name, source=source, transport=Transport(transport), **fields)


def toolbox_spec(name: str = "toolbox", *extra: str, **fields: Any) -> ServerSpec:
    """The toolbox over stdio (extra = command-line flags)."""
    fields.setdefault("connect_timeout", 30.0)
    return make_spec(
        name,
        "stdio",
        command=sys.executable,
        args=(str(TOOLBOX), "stdio", *extra),
        **fields,
    )


def failing_spec(name: str = "failing", code: int = 4, **fields: Any) -> ServerSpec:
    """A stdio server that writes two stderr lines and exits at once (cheap: no SDK import)."""
    script = (
        f"import sys; sys.stderr.write('about to fail\\nfailing at start\\n'); sys.exit({code})"
    )
    return make_spec(name, "stdio", command=sys.executable, args=("-c", script), **fields)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_port(port: int, proc: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"test server exited early with code {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"test server did not listen on {port} within {timeout} s")


@dataclass
class RunningServer:
    url: str
    port: int
    proc: subprocess.Popen[bytes]


def start_toolbox(kind: str, *extra: str) -> RunningServer:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, str(TOOLBOX), kind, "--port", str(port), *extra],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_port(port, proc)
    except BaseException:
        proc.kill()
        raise
    path = "/mcp" if kind == "http" else "/sse"
    return RunningServer(f"http://127.0.0.1:{port}{path}", port, proc)


def stop_server(server: RunningServer) -> None:
    server.proc.kill()
    server.proc.wait(timeout=10)


@pytest.fixture(scope="module")
def toolbox_http() -> Iterator[RunningServer]:
    server = start_toolbox("http")
    yield server
    stop_server(server)


@pytest.fixture(scope="module")
def toolbox_sse() -> Iterator[RunningServer]:
    server = start_toolbox("sse")
    yield server
    stop_server(server)


@dataclass
class Recorder:
    """Collects bus events for assertions."""

    events: list[Event] = field(default_factory=list)

    def __call__(self, event: Event) -> None:
        self.events.append(event)

    def statuses(self) -> list[Status]:
        return [e.state.status for e in self.events if isinstance(e, StatusChanged)]


@pytest.fixture
def bus() -> EventBus:
    return EventBus()


@pytest.fixture
def events(bus: EventBus) -> Recorder:
    recorder = Recorder()
    bus.subscribe(recorder)
    return recorder


async def eventually(check: Callable[[], bool], within: float = 20.0, what: str = "") -> None:
    deadline = time.monotonic() + within
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or check}")
        await asyncio.sleep(0.02)
