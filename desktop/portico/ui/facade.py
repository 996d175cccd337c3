"""The runtime thread: a plain asyncio loop in one daemon thread, behind a thin facade.

The hub and every MCP connection live on this loop (docs/architecture.md, "Threads and
loops"), so parsing MCP traffic never stalls the GUI loop and never pays qasync's
per-callback cost. The GUI reaches it only through :meth:`RuntimeThread.submit`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import os
import threading
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")

DIRECT_SUBMIT_ENV = "PORTICO_FACADE_DIRECT"  # "0": run_coroutine_threadsafe + wrap_future


class RuntimeNotRunning(RuntimeError):
    """The runtime thread was not started yet or has already stopped."""


class RuntimeThread:
    """Owns one asyncio loop running in a daemon thread.

    ``start()`` returns once the loop runs. ``submit(coro)`` schedules a coroutine on the
    runtime loop and returns an asyncio future on the *calling* loop (the GUI loop), so
    GUI coroutines simply ``await runtime.submit(hub.retry(name))``. Cancelling that
    future cancels the coroutine on the runtime loop.
    """

    def __init__(self, name: str = "portico-runtime", *, direct: bool | None = None) -> None:
        self._name = name
        # ``direct``: submit() hands results back with one call_soon_threadsafe and no
        # concurrent future in between (see submit); may be flipped at any time.
        self.direct = os.environ.get(DIRECT_SUBMIT_ENV, "1") != "0" if direct is None else direct
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
                # Work submitted while those ran (a chat-list refresh during quit) is
                # cancelled too, not destroyed pending ("Task was destroyed but it is pending").
                _cancel_all_tasks(loop)
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
        """Schedule ``coro`` on the runtime loop; an asyncio future on the calling loop.

        The direct path (``self.direct``) skips run_coroutine_threadsafe's concurrent
        future (its lock, condition and chained callbacks): the task's done callback
        settles the caller's future with one call_soon_threadsafe. Same semantics:
        cancelling the returned future cancels the task on the runtime loop, and the
        task's result, exception or cancellation reaches the caller.
        """
        try:
            runtime = self.loop
            caller = asyncio.get_running_loop()
        except (RuntimeNotRunning, RuntimeError):
            if not self.is_running:
                coro.close()
                raise RuntimeNotRunning("the runtime thread is not running") from None
            caller = None
        if caller is None or not self.direct:
            return asyncio.wrap_future(self.submit_concurrent(coro))
        return _submit_direct(coro, runtime, caller)

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


def _submit_direct(
    coro: Coroutine[Any, Any, T],
    runtime: asyncio.AbstractEventLoop,
    caller: asyncio.AbstractEventLoop,
) -> asyncio.Future[T]:
    outer: asyncio.Future[T] = caller.create_future()
    started: list[asyncio.Task[T]] = []

    def settle(task: asyncio.Task[T]) -> None:  # on the caller's loop
        if outer.done():
            if not task.cancelled():
                task.exception()  # retrieved: the caller gave up on it
            return
        if task.cancelled():
            outer.cancel()
        elif (exc := task.exception()) is not None:
            outer.set_exception(exc)
        else:
            outer.set_result(task.result())

    def finished(task: asyncio.Task[T]) -> None:  # on the runtime loop
        try:
            caller.call_soon_threadsafe(settle, task)
        except RuntimeError:  # the caller's loop is closed: nobody waits for the result
            if not task.cancelled():
                task.exception()

    def start() -> None:  # on the runtime loop; always runs before cancel()
        task = runtime.create_task(coro)
        started.append(task)
        task.add_done_callback(finished)

    def cancel() -> None:  # on the runtime loop
        if started:
            started[0].cancel()

    def on_outer_done(fut: asyncio.Future[T]) -> None:  # on the caller's loop
        if fut.cancelled():
            with contextlib.suppress(RuntimeError):  # the runtime loop has stopped
                runtime.call_soon_threadsafe(cancel)

    outer.add_done_callback(on_outer_done)
    try:
        runtime.call_soon_threadsafe(start)
    except RuntimeError:
        coro.close()
        outer.remove_done_callback(on_outer_done)
        outer.cancel()
        raise RuntimeNotRunning("the runtime thread is not running") from None
    return outer


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
