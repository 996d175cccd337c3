"""`portico mcp list` follows discovery through the hub's events on a terminal."""

from __future__ import annotations

import io
import sys

import pytest

from portico.cli.runtime_cmds import DiscoveryProgress
from portico.config.model import Config
from portico.runtime.hub import Hub
from tests.helpers.servers import TINY
from tests.helpers.specs import failing_spec, make_spec

pytestmark = pytest.mark.slow  # talks to real servers or processes


async def test_progress_line_counts_settled_servers_from_events() -> None:
    specs = (
        make_spec("one", command=sys.executable, args=(str(TINY), "--tools", "1")),
        make_spec("two", command=sys.executable, args=(str(TINY), "--tools", "1")),
        failing_spec("broken"),
    )
    stream = io.StringIO()
    progress = DiscoveryProgress([s.name for s in specs], stream)
    async with Hub() as hub:
        hub.bus.subscribe(progress.on_event)
        await hub.apply(Config(servers=specs))
        progress.finish()
    frames = [f for f in stream.getvalue().split("\r\033[K") if f]
    assert len(frames) == 3  # one redraw per server that settled, in the order they did
    assert frames[-1] == "connecting: 3 of 3 settled"
    assert frames[0].startswith("connecting: 1 of 3 settled (waiting for ")
    assert stream.getvalue().endswith("\r\033[K")  # the line is cleared before the table
