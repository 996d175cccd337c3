"""The runtime thread: a plain asyncio loop in one daemon thread, behind a thin facade.

The hub and every MCP connection live on this loop (shared/DESIGN.md rule 5), so parsing
MCP traffic never stalls the GUI loop and never pays qasync's per-callback cost. The GUI
reaches it only through :meth:`RuntimeThread.submit`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import threading
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")


class RuntimeNotRunning(RuntimeError):
    """The runtime thread was not started yet or has already stopped."""


class RuntimeThread:
    """Owns one asyncio loop running in a daemon thread.

    ``start()`` returns once the loop runs. ``submit(coro)`` schedules a coroutine on the
    runtime loop and returns an asyncio future on the *calling* loop (the GUI loop), so
    GUI coroutines simply ``await runtime.submit(hub.retry(name))``. Cancelling that
    future cancels the coroutine on the runtime loop.
    """

    def __init__(self, name: str = "portico-runtime") -> None:
        self._name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._stopped = threading.Event()

    # --- lifecycle -------------------------------------------------------------------

    def start(self, timeout: float = 10.0) -> None:
        if self._thread is not None:
            raise RuntimeError("the runtime thread was already started")
        self._thread = threading.Thread(target=self._main, name=self._name, daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout):
            raise RuntimeError(f"the runtime thread did not start within {timeout} s")

    def _main(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        asyncio.set_event_loop(loop)
        loop.call_soon(self._ready.set)
        try:
            loop.run_forever()
        finally:
            try:
                _cancel_all_tasks(loop)
                loop.run_until_complete(loop.shutdown_asyncgens())
                loop.run_until_complete(loop.shutdown_default_executor())
            finally:
                asyncio.set_event_loop(None)
                loop.close()
                self._stopped.set()

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None or not self.is_running:
            raise RuntimeNotRunning("the runtime thread is not running")
        return self._loop

    @property
    def thread(self) -> threading.Thread | None:
        return self._thread

    @property
    def is_running(self) -> bool:
        return self._ready.is_set() and not self._stopped.is_set()

    def in_runtime_thread(self) -> bool:
        return threading.current_thread() is self._thread

    # --- crossing the thread boundary ---------------------------------------------------

    def submit_concurrent(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Schedule ``coro`` on the runtime loop; a thread-safe concurrent future."""
        try:
            loop = self.loop
        except RuntimeNotRunning:
            coro.close()
            raise
        return asyncio.run_coroutine_threadsafe(coro, loop)

    def submit(self, coro: Coroutine[Any, Any, T]) -> asyncio.Future[T]:
        """Schedule ``coro`` on the runtime loop; an asyncio future on the calling loop."""
        return asyncio.wrap_future(self.submit_concurrent(coro))

    def call_soon(self, callback: Callable[..., Any], *args: Any) -> None:
        """Run a plain callable on the runtime loop (thread-safe, fire and forget)."""
        self.loop.call_soon_threadsafe(callback, *args)

    # --- shutdown ----------------------------------------------------------------------

    async def shutdown(
        self,
        close: Callable[[], Awaitable[Any]] | None = None,
        timeout: float = 15.0,  # noqa: ASYNC109
    ) -> None:
        """Await ``close()`` on the runtime loop (e.g. ``hub.close``), then stop the thread.

        Called from the GUI loop; never blocks it: the thread join runs in a worker.
        """
        if not self.is_running:
            return
        if close is not None:

            async def _close() -> None:
                await close()

            try:
                await asyncio.wait_for(self.submit(_close()), timeout)
            except TimeoutError:
                log.warning("the runtime did not close within %s s; stopping it anyway", timeout)
            except Exception:
                log.exception("closing the runtime failed; stopping it anyway")
        self._request_stop()
        thread = self._thread
        if thread is not None:
            await asyncio.to_thread(thread.join, timeout)

    def stop(self, timeout: float = 15.0) -> None:
        """Blocking stop for code outside any loop (tests, atexit)."""
        if not self.is_running:
            return
        self._request_stop()
        if self._thread is not None:
            self._thread.join(timeout)

    def _request_stop(self) -> None:
        loop = self._loop
        if loop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # closed since the check
                loop.call_soon_threadsafe(loop.stop)


def _cancel_all_tasks(loop: asyncio.AbstractEventLoop) -> None:
    tasks = [t for t in asyncio.all_tasks(loop) if not t.done()]
    if not tasks:
        return
    for task in tasks:
        task.cancel()
    loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
    for task in tasks:
        if not task.cancelled() and task.exception() is not None:
            log.error("runtime task %r failed during shutdown", task, exc_info=task.exception())
