"""Runtime test helpers: ServerSpec builder, toolbox servers over HTTP / SSE on 127.0.0.1."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from portico.runtime.events import Event, EventBus, Status, StatusChanged
from tests.helpers.servers import (
    RunningServer,
    free_port,
    start_toolbox,
    stop_server,
    wait_port,
)
from tests.helpers.specs import failing_spec, make_spec, toolbox_spec

__all__ = [
    "RunningServer",
    "failing_spec",
    "free_port",
    "make_spec",
    "start_toolbox",
    "stop_server",
    "toolbox_spec",
    "wait_port",
]

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
