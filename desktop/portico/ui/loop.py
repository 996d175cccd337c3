"""The GUI thread's asyncio loop: qasync's QEventLoop with asyncio's async-generator hooks
and a cheaper ``call_soon``.

qasync runs ``app.exec()`` without installing the hooks that asyncio's own loops install,
so async generators (httpx2 streams, anyio cancel scopes) were finalized on the wrong task
("Attempted to exit a cancel scope that isn't the current task's"; docs/platform-notes.md,
"qasync").

qasync 0.28 gives every ``call_soon`` its own Qt timer (``startTimer(0)``, a timer event,
``killTimer``) and routes ``call_soon_threadsafe`` through a queued signal that then makes
such a timer. Here both append to one ready queue that a single posted Qt event drains, so
each result crossing from the runtime thread costs one posted event instead of a signal
plus two timers (tests/benchmarks/test_bench_gui_stall.py measures both paths). Qt runs
other events (input, paints, timers) between drains: callbacks queued while a drain runs
wait for the next one, as in asyncio's own loop.

Callbacks run only while the loop runs. Qt can deliver their events outside it (pytest-qt's
``processEvents`` between a test and its async fixtures' teardown, or the app before its
loop starts): qasync would run them there, where ``asyncio.get_running_loop()`` fails (a
uvicorn server's ``asyncio.sleep`` raised "no running event loop"). Such a callback waits
in the ready queue for the loop to run again.
"""

from __future__ import annotations

import asyncio
import collections
import os
import sys
from collections.abc import Callable
from contextvars import Context
from typing import Any

import qasync
from PySide6.QtCore import QCoreApplication, QEvent, QObject, Qt
from PySide6.QtWidgets import QApplication

# The app sets this once at start (app.main); Python's default is 5 ms. A GIL waiter asks
# for a forced switch only after a whole interval with no hand-over at all, and the runtime
# loop drops and retakes the GIL at every select(): so a runtime thread busy in Python
# bursts shorter than the interval starves the GUI thread. Measured (heartbeat, 2 cores):
# 5 ms: 27-160 ms median gaps, 300 ms worst, for bursts of 0.1-1.5 ms; 0.2 ms: 11-15 ms for
# bursts >= 0.3 ms; two CPU-bound threads lose <= 3% throughput. See the stall benchmark.
GIL_SWITCH_INTERVAL = 0.0002
FAST_CALLS_ENV = "PORTICO_LOOP_FAST_CALLS"  # "0" falls back to qasync's timer per callback
_DRAIN_EVENT = QEvent.Type(QEvent.registerEventType())


class _Drainer(QObject):
    """Receives the posted drain events on the GUI thread."""

    def __init__(self, drain: Callable[[], None]) -> None:
        super().__init__()
        self._drain = drain

    def customEvent(self, event: QEvent) -> None:  # only our posted drain events arrive
        self._drain()


class PorticoEventLoop(qasync.QEventLoop):  # type: ignore[misc]
    """Use with ``asyncio.Runner(loop_factory=lambda: PorticoEventLoop(app))``.

    ``fast_calls`` (default on; env ``PORTICO_LOOP_FAST_CALLS=0`` turns it off) selects
    the ready-queue path for ``call_soon`` / ``call_soon_threadsafe``; it may be flipped
    while the loop runs (the benchmark compares both in one run).
    """

    def __init__(self, app: QApplication | None = None, *, fast_calls: bool | None = None) -> None:
        super().__init__(app or QApplication.instance())
        if fast_calls is None:
            fast_calls = os.environ.get(FAST_CALLS_ENV, "1") != "0"
        self.fast_calls = fast_calls
        # Not ``_ready``: asyncio's BaseEventLoop owns that name.
        self._soon: collections.deque[asyncio.Handle] = collections.deque()
        self._drain_posted = False
        self._drainer = _Drainer(self._drain)

    def run_forever(self) -> Any:
        old_hooks = sys.get_asyncgen_hooks()
        sys.set_asyncgen_hooks(
            firstiter=self._asyncgen_firstiter_hook,
            finalizer=self._asyncgen_finalizer_hook,
        )
        if self._soon and not self._drain_posted:
            self._post_drain()  # what came due while the loop was not running
        try:
            return super().run_forever()
        finally:
            sys.set_asyncgen_hooks(*old_hooks)

    # --- callbacks -------------------------------------------------------------------------

    def call_soon(
        self, callback: Callable[..., Any], *args: Any, context: Context | None = None
    ) -> asyncio.Handle:
        if not self.fast_calls:
            return super().call_soon(callback, *args, context=context)
        self._check_closed()
        return self._enqueue(callback, args, context)

    def call_soon_threadsafe(
        self, callback: Callable[..., Any], *args: Any, context: Context | None = None
    ) -> asyncio.Handle | None:
        """Safe from any thread: ``deque.append`` is atomic and ``postEvent`` is
        thread-safe."""
        if not self.fast_calls:
            return super().call_soon_threadsafe(callback, *args, context=context)
        self._check_closed()
        return self._enqueue(callback, args, context)

    def _enqueue(
        self, callback: Callable[..., Any], args: tuple[Any, ...], context: Context | None
    ) -> asyncio.Handle:
        if asyncio.iscoroutine(callback) or not callable(callback):
            raise TypeError(f"a callable object was expected, got {callback!r}")
        handle = asyncio.Handle(callback, args, self, context=context)
        self._soon.append(handle)  # before the flag check: a drain clears the flag first
        if not self._drain_posted:
            self._post_drain()
        return handle

    def _add_callback(self, handle: asyncio.Handle, delay: float = 0) -> asyncio.Handle:
        """qasync's timer for ``call_later`` / ``call_at`` (and ``call_soon`` without
        ``fast_calls``) fires ``_timer_fired``, which runs ``handle`` only inside the loop."""
        super()._add_callback(asyncio.Handle(self._timer_fired, (handle,), self), delay)
        return handle

    def _timer_fired(self, handle: asyncio.Handle) -> None:
        if handle._cancelled:
            return
        if self.is_running():
            handle._run()
        else:
            self._soon.append(handle)  # run_forever drains it

    def _post_drain(self) -> None:
        self._drain_posted = True
        QCoreApplication.postEvent(self._drainer, QEvent(_DRAIN_EVENT))

    def _drain(self) -> None:
        """Run the callbacks queued before this drain started (one posted event)."""
        self._drain_posted = False
        if not self.is_running():
            return  # run_forever posts the drain again
        soon = self._soon
        debug = self.get_debug()
        try:
            for _ in range(len(soon)):
                handle = soon.popleft()
                if handle._cancelled:
                    continue
                if debug:
                    self._run_logged(handle)
                else:
                    handle._run()
        finally:
            if soon and not self._drain_posted and not self.is_closed():
                self._post_drain()  # a BaseException left callbacks behind

    def _run_logged(self, handle: asyncio.Handle) -> None:
        self._current_handle = handle
        start = self.time()
        try:
            handle._run()
        finally:
            self._current_handle = None  # type: ignore[assignment]  # asyncio's own loop does too
        took = self.time() - start
        if took >= self.slow_callback_duration:
            qasync.logger.warning("Executing %s took %.3f seconds", handle, took)

    def close(self) -> None:
        if not self.is_running():
            self._soon.clear()
        super().close()


def ensure_application(argv: list[str] | None = None) -> QApplication:
    """The process's QApplication, created on first use."""
    app = QApplication.instance()
    if app is None:
        # QtWebEngine (MCP Apps views, loaded on the first view) needs this set first
        QApplication.setAttribute(Qt.ApplicationAttribute.AA_ShareOpenGLContexts)
        app = QApplication(argv if argv is not None else sys.argv[:1])
    assert isinstance(app, QApplication)
    return app
