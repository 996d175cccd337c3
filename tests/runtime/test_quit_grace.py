"""Issue 26, item 17: quitting waits for the servers. A stdio server gets 2 s after its
stdin closes before TERM; at quit (Hub.close: the app's and every command's end) it gets
0.3 s, so servers slow to exit no longer hold the quit for the whole grace."""

from __future__ import annotations

import asyncio
import time

import pytest

from portico.config.model import Config, Protocol
from portico.runtime.events import Status
from portico.runtime.hub import Hub
from portico.runtime.transports.stdio import GRACE_SECONDS
from tests.helpers.specs import toolbox_spec

pytestmark = pytest.mark.slow  # real stdio servers

LINGERING = ("--linger", "30")  # stays 30 s after its stdin ends


def _config(*names: str) -> Config:
    return Config(
        servers=tuple(toolbox_spec(n, *LINGERING, protocol=Protocol.LEGACY) for n in names)
    )


async def test_quit_does_not_wait_out_the_grace() -> None:
    hub = Hub()
    try:
        await hub.apply(_config("one", "two"))
        assert {s.status for s in hub.states()} == {Status.RUNNING}
        pids = [hub.connection(n).pid for n in ("one", "two")]
    finally:
        started = time.monotonic()
        await hub.close()
        took = time.monotonic() - started
    print(f"\nquit with two servers slow to exit: {took:.2f} s")
    assert took < GRACE_SECONDS - 0.5, f"quit took {took:.2f} s"
    assert all(pid is not None for pid in pids)


async def test_a_removed_server_still_gets_the_whole_grace() -> None:
    async with Hub() as hub:
        await hub.apply(_config("one"))
        started = time.monotonic()
        await hub.apply(Config(servers=()))  # an edit, not a quit: it may finish its work
        took = time.monotonic() - started
        assert took >= GRACE_SECONDS - 0.1, f"the stop took {took:.2f} s"
        await asyncio.sleep(0)
