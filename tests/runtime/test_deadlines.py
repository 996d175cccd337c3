"""Call deadlines armed late (runtime/deadlines.py): a call that ends soon never gets a
timer; one that runs on is armed before it is due and times out on time."""

from __future__ import annotations

import asyncio

import pytest

from portico.runtime.connection import Connection
from portico.runtime.deadlines import LazyDeadlines
from portico.runtime.errors import CallTimeout
from portico.runtime.events import EventBus, Status

from .conftest import toolbox_spec


async def test_a_call_that_ends_soon_never_arms_its_deadline() -> None:
    loop = asyncio.get_running_loop()
    deadlines = LazyDeadlines(after=0.2)
    async with asyncio.timeout(None) as quick:
        deadlines.add(quick, loop.time() + 30)
        await asyncio.sleep(0.01)
        deadlines.discard(quick)
    assert quick.when() is None
    async with asyncio.timeout(None) as slow:
        deadlines.add(slow, due := loop.time() + 30)
        assert slow.when() is None
        await asyncio.sleep(0.3)  # outlived `after`: armed, for the same moment
        assert slow.when() == due
        deadlines.discard(slow)


async def test_a_deadline_sooner_than_the_arming_timer_is_armed_at_once() -> None:
    loop = asyncio.get_running_loop()
    deadlines = LazyDeadlines(after=1.0)
    began = loop.time()
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(None) as deadline:
            deadlines.add(deadline, due := began + 0.2)
            assert deadline.when() == due
            await asyncio.sleep(5)
    assert 0.15 < loop.time() - began < 0.8


@pytest.mark.slow
async def test_a_call_past_a_long_timeout_is_cut_on_time(bus: EventBus) -> None:
    conn = Connection(toolbox_spec("hangs", timeout=30), bus=bus)
    await conn.start()
    try:
        assert (await conn.wait_settled(30)).status is Status.RUNNING
        loop = asyncio.get_running_loop()
        began = loop.time()
        with pytest.raises(CallTimeout, match=r"within 1\.6 s"):
            await conn.call_tool("hang", {}, timeout=1.6)  # longer than ARM_AFTER (1 s)
        assert 1.55 < loop.time() - began < 2.6
        result = await conn.call_tool("echo", {"text": "still here"})
        assert result.content[0].text == "echo: still here"
    finally:
        await conn.stop()
