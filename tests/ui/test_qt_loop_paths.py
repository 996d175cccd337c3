"""The GUI loop's ready queue (PorticoEventLoop.fast_calls) and the facade's direct submit
path (RuntimeThread.direct), each checked against its fallback (qasync's timer per
callback, run_coroutine_threadsafe + wrap_future)."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest

from portico.ui.facade import RuntimeThread
from portico.ui.loop import PorticoEventLoop, ensure_application
from tests.ui.qt_helpers import until


@pytest.fixture(params=[True, False], ids=["ready-queue", "qasync-timers"])
async def gui_loop(request: pytest.FixtureRequest) -> AsyncIterator[PorticoEventLoop]:
    loop = asyncio.get_running_loop()
    assert isinstance(loop, PorticoEventLoop)
    before = loop.fast_calls
    loop.fast_calls = request.param
    yield loop
    loop.fast_calls = before


async def test_call_soon_runs_in_order_and_skips_cancelled(gui_loop: PorticoEventLoop) -> None:
    assert asyncio.get_running_loop() is gui_loop
    ran: list[int] = []
    handles = [gui_loop.call_soon(ran.append, i) for i in range(50)]
    handles[7].cancel()
    await until(lambda: len(ran) == 49, what="the callbacks to run")
    assert ran == [i for i in range(50) if i != 7]


async def test_call_soon_threadsafe_from_another_thread(gui_loop: PorticoEventLoop) -> None:
    gui_thread = threading.current_thread()
    seen: list[tuple[int, bool]] = []

    def producer() -> None:
        for i in range(500):
            gui_loop.call_soon_threadsafe(
                lambda i=i: seen.append((i, threading.current_thread() is gui_thread))
            )

    thread = threading.Thread(target=producer)
    thread.start()
    await asyncio.to_thread(thread.join)
    await until(lambda: len(seen) == 500, what="500 callbacks from the worker thread")
    assert [i for i, _ in seen] == list(range(500))
    assert all(on_gui for _, on_gui in seen)


async def test_a_failing_callback_reaches_the_handler_and_the_rest_still_run(
    gui_loop: PorticoEventLoop,
) -> None:
    contexts: list[dict[str, Any]] = []
    previous = gui_loop.get_exception_handler()
    gui_loop.set_exception_handler(lambda _loop, context: contexts.append(context))
    ran: list[str] = []

    def boom() -> None:
        raise ValueError("callback failed")

    try:
        gui_loop.call_soon(ran.append, "before")
        gui_loop.call_soon(boom)
        gui_loop.call_soon(ran.append, "after")
        await until(lambda: ran == ["before", "after"], what="the callbacks around the failure")
    finally:
        gui_loop.set_exception_handler(previous)
    assert [type(c.get("exception")) for c in contexts] == [ValueError]


async def test_ticks_interleave_with_qt_timers(gui_loop: PorticoEventLoop) -> None:
    """A task that only yields must not starve Qt: a QTimer still fires meanwhile."""
    from PySide6.QtCore import QTimer

    fired: list[int] = []
    timer = QTimer()
    timer.setInterval(5)
    timer.timeout.connect(lambda: fired.append(1))
    timer.start()
    try:
        deadline = gui_loop.time() + 2.0
        ticks = 0
        while not fired and gui_loop.time() < deadline:
            await asyncio.sleep(0)
            ticks += 1
    finally:
        timer.stop()
    assert fired, f"a 5 ms QTimer never fired while a task yielded {ticks} times for 2 s"


@pytest.mark.parametrize("direct", [True, False], ids=["direct", "wrap_future"])
async def test_submit_paths_carry_results_errors_and_cancellation(
    runtime: RuntimeThread, direct: bool
) -> None:
    runtime.direct = direct

    async def where() -> str:
        await asyncio.sleep(0)
        return threading.current_thread().name

    async def boom() -> None:
        raise LookupError("no tool named x on server y")

    assert await runtime.submit(where()) == "portico-runtime"
    results = await asyncio.gather(*(runtime.submit(where()) for _ in range(20)))
    assert results == ["portico-runtime"] * 20
    with pytest.raises(LookupError, match="no tool named x"):
        await runtime.submit(boom())

    started, cancelled = threading.Event(), threading.Event()

    async def forever() -> None:
        started.set()
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    fut = runtime.submit(forever())
    await until(started.is_set, what="the runtime task to start")
    fut.cancel()
    with pytest.raises(asyncio.CancelledError):
        await fut
    await until(cancelled.is_set, what="cancellation on the runtime loop")

    async def cancelled_there() -> None:
        asyncio.current_task().cancel()  # type: ignore[union-attr]
        await asyncio.sleep(0)

    with pytest.raises(asyncio.CancelledError):
        await runtime.submit(cancelled_there())


@pytest.mark.parametrize("fast_calls", [True, False], ids=["ready-queue", "qasync-timers"])
def test_callbacks_wait_for_the_loop_while_qt_runs_outside_it(fast_calls: bool) -> None:
    """pytest-qt processes Qt events between a test and its fixtures' teardown; the app can
    before its loop starts. A callback due then runs once the loop runs again, inside it."""
    app = ensure_application()
    loop = PorticoEventLoop(app, fast_calls=fast_calls)
    seen: list[tuple[str, bool]] = []

    def note(what: str) -> None:
        seen.append((what, asyncio.get_running_loop() is loop))

    async def sleeper() -> None:
        await asyncio.sleep(0.01)
        note("task")

    try:
        task = loop.create_task(sleeper())
        loop.run_until_complete(asyncio.sleep(0))  # the task now sleeps on a timer
        loop.call_soon(note, "soon")
        loop.call_later(0.005, note, "later")
        deadline = time.monotonic() + 0.1
        while time.monotonic() < deadline:  # every timer and posted event comes due
            app.processEvents()
            time.sleep(0.005)
        assert seen == []
        loop.run_until_complete(task)
        assert sorted(seen) == [("later", True), ("soon", True), ("task", True)]
    finally:
        loop.close()
