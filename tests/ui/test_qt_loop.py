"""The GUI loop: asyncgen hooks installed, survives tens of thousands of ticks, runtime facade."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
import threading

import pytest

from portico.ui.facade import RuntimeNotRunning, RuntimeThread
from portico.ui.loop import PorticoEventLoop
from tests.ui.qt_helpers import until

pytestmark = pytest.mark.slow  # talks to real servers or processes

SURVIVAL = textwrap.dedent(
    """
    import asyncio, sys
    from portico.ui.loop import PorticoEventLoop, ensure_application

    async def ticks(n):
        for _ in range(n):
            await asyncio.sleep(0)
        return n

    app = ensure_application()
    with asyncio.Runner(loop_factory=lambda: PorticoEventLoop(app)) as runner:
        done = runner.run(ticks(int(sys.argv[1])))
    print("ticks", done, flush=True)
    """
)


def test_hooked_loop_survives_tens_of_thousands_of_ticks() -> None:
    # PySide6 6.12 on Python 3.11 died here with "none_dealloc" after ~5,000-8,000 ticks.
    proc = subprocess.run(
        [sys.executable, "-c", SURVIVAL, "40000"],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "ticks 40000" in proc.stdout


async def test_the_test_loop_is_the_hooked_qasync_loop() -> None:
    loop = asyncio.get_running_loop()
    assert isinstance(loop, PorticoEventLoop)
    firstiter, finalizer = sys.get_asyncgen_hooks()
    assert firstiter is not None and firstiter.__self__ is loop  # type: ignore[attr-defined]
    assert finalizer is not None and finalizer.__self__ is loop  # type: ignore[attr-defined]


async def test_async_generator_is_finalized_by_the_gui_loop() -> None:
    closed = asyncio.Event()

    async def gen():  # type: ignore[no-untyped-def]
        try:
            yield 1
            yield 2
        finally:
            closed.set()

    agen = gen()
    assert await agen.__anext__() == 1
    del agen  # the finalizer hook schedules aclose() on this loop
    await asyncio.wait_for(closed.wait(), 5)
    assert closed.is_set()


async def test_submit_runs_on_the_runtime_thread_and_returns_on_the_gui_loop(
    runtime: RuntimeThread,
) -> None:
    gui_thread = threading.current_thread()

    async def where() -> tuple[str, bool]:
        await asyncio.sleep(0)
        return threading.current_thread().name, isinstance(
            asyncio.get_running_loop(), PorticoEventLoop
        )

    name, on_qasync = await runtime.submit(where())
    assert name == "portico-runtime"
    assert on_qasync is False
    assert threading.current_thread() is gui_thread


async def test_submit_propagates_errors_and_cancellation(runtime: RuntimeThread) -> None:
    async def boom() -> None:
        raise ValueError("server x said no")

    with pytest.raises(ValueError, match="server x said no"):
        await runtime.submit(boom())

    started = threading.Event()
    cancelled = threading.Event()

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


async def test_shutdown_awaits_the_close_coroutine_then_stops() -> None:
    runtime = RuntimeThread()
    runtime.start()
    closed_on: list[str] = []
    pending_cancelled = threading.Event()

    async def lingering() -> None:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            pending_cancelled.set()
            raise

    runtime.submit_concurrent(lingering())

    async def close() -> None:
        await asyncio.sleep(0.05)
        closed_on.append(threading.current_thread().name)

    await runtime.shutdown(close)
    assert closed_on == ["portico-runtime"]
    assert not runtime.is_running
    assert runtime.thread is not None and not runtime.thread.is_alive()
    assert pending_cancelled.is_set()
    with pytest.raises(RuntimeNotRunning):
        runtime.submit(close())
