"""Issue 26, item 17: the Cooldown countdown in the server list and in the Overview
differed by a second. Both read the window's one clock, once per tick, rounded up."""

from __future__ import annotations

import asyncio
import math
import re

import pytest

from portico.runtime.events import Status
from portico.ui.models.clock import clock
from tests.ui.pages_helpers import command, running_app, select, status_of, write_global
from tests.ui.qt_helpers import until

pytestmark = pytest.mark.slow  # the whole app with a real (failing) stdio server

SECONDS = re.compile(r"retrying in (\d+) s")


async def test_the_list_and_the_overview_count_down_the_same_seconds() -> None:
    write_global(f"[mcp.broken]\ncommand = {command('tiny.py', '--exit', '3')}\n")
    async with running_app() as desktop:
        await until(lambda: status_of(desktop, "broken") is Status.COOLDOWN, 30, "broken cools")
        select(desktop, "broken")
        pages = desktop.pages
        await until(lambda: pages.overview.details is not None, 10, "broken's details")
        model = desktop.model
        seen: list[tuple[str, str, int]] = []

        def at_tick() -> None:  # connected last: the list and the Overview have redrawn
            state = model.state("broken")
            if state is None or state.status is not Status.COOLDOWN or state.retry_at is None:
                return
            row = model.row_of("broken")
            listed = str(model.index(row).data(model.StatusTextRole))
            shown = SECONDS.search(pages.overview.table.text())
            expected = max(0, math.ceil(state.retry_at - clock().now()))
            seen.append((listed, shown.group(1) if shown else "", expected))

        clock().ticked.connect(at_tick)
        try:
            await until(lambda: len(seen) >= 4, 30, "four ticks in Cooldown")
        finally:
            clock().ticked.disconnect(at_tick)
        for listed, shown, expected in seen:
            assert listed.endswith(f"retrying in {expected} s"), seen
            assert shown == str(expected), seen
        # One reading per tick: what is drawn between two ticks reads the same time.
        ticked = asyncio.Event()
        clock().ticked.connect(ticked.set)
        try:
            await asyncio.wait_for(ticked.wait(), 5)
            before = clock().now()
            await asyncio.sleep(0.05)
            assert clock().now() == before
        finally:
            clock().ticked.disconnect(ticked.set)
