"""``Ops.spawn``: the one way the GUI runs a background coroutine. It stays alive until it
ends, its failure becomes a notice (no exception disappears), and one cancelled before it
started is closed without a "never awaited" warning (which fails the run)."""

from __future__ import annotations

import asyncio

from portico.prompts import Notice
from portico.ui.ops import Ops


async def test_a_failure_is_a_notice_and_a_success_leaves_none() -> None:
    notices: list[Notice] = []
    ops = Ops(notices.append)

    async def boom() -> None:
        await asyncio.sleep(0)
        raise RuntimeError("the disk is full")

    async def fine() -> int:
        return 1

    failed = ops.spawn(boom(), "Save the result")
    done = ops.spawn(fine(), "Count")
    assert ops.running == 2
    await asyncio.gather(failed, done)
    assert ops.running == 0
    assert [(n.level, n.text) for n in notices] == [
        ("error", "Save the result failed: the disk is full")
    ]


async def test_a_failure_handler_replaces_the_notice() -> None:
    notices: list[Notice] = []
    handled: list[str] = []
    ops = Ops(notices.append)

    async def boom() -> None:
        raise ValueError("no")

    await ops.spawn(boom(), "x", failure=lambda exc: handled.append(str(exc)))
    assert handled == ["no"] and notices == []


async def test_cancelled_before_it_started_the_coroutine_is_closed() -> None:
    ops = Ops()
    ran: list[bool] = []

    async def work() -> None:
        ran.append(True)

    coro = work()
    task = ops.spawn(coro, "x")
    ops.cancel_all()
    await asyncio.gather(task, return_exceptions=True)
    assert task.cancelled() and ran == [] and ops.running == 0
    assert coro.cr_frame is None  # closed: no "coroutine was never awaited" at collection
