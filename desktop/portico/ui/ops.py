"""Background operations for the GUI, in the style of Anki's ``QueryOp``.

An :class:`Op` runs a coroutine on the GUI loop (which usually awaits the runtime thread
through the facade) and calls ``success`` or ``failure`` back on the GUI thread. Without a
``failure`` callback the exception becomes a notice in the one place that words them
(:func:`failure_notice`). :class:`Ops` keeps the running operations alive and cancels them
at shutdown; every background task of the GUI runs through one (``Ops.op`` or ``Ops.spawn``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine
from typing import Any, Generic, TypeVar

from portico.prompts import Notice

log = logging.getLogger(__name__)

T = TypeVar("T")
NoticeSink = Callable[[Notice], None]


class NoRuntime(RuntimeError):
    """The runtime thread or session is not up (yet)."""


def failure_notice(what: str, exc: BaseException, server: str | None = None) -> Notice:
    """The notice for a failed operation ``what`` ("Remove github", "Sign in to github")."""
    if isinstance(exc, NoRuntime):
        return Notice("error", "The server runtime is not running.", server, kind="runtime")
    detail = str(exc).strip() or type(exc).__name__
    return Notice("error", f"{what} failed: {detail}", server, kind=f"op:{what}")


class Op(Generic[T]):
    """One background operation: ``Op(ops, work, "Remove github").success(f).run()``."""

    def __init__(
        self,
        ops: Ops,
        work: Callable[[], Coroutine[Any, Any, T]],
        what: str,
        *,
        server: str | None = None,
    ) -> None:
        self._ops = ops
        self._work = work
        self.what = what
        self.server = server
        self._success: Callable[[T], Any] | None = None
        self._failure: Callable[[Exception], Any] | None = None
        self._finally: Callable[[], Any] | None = None

    def success(self, callback: Callable[[T], Any]) -> Op[T]:
        self._success = callback
        return self

    def failure(self, callback: Callable[[Exception], Any]) -> Op[T]:
        """Handle the failure yourself (no notice then)."""
        self._failure = callback
        return self

    def finally_(self, callback: Callable[[], Any]) -> Op[T]:
        self._finally = callback
        return self

    def run(self) -> asyncio.Task[None]:
        return self._ops._keep(self._run())

    async def _run(self) -> None:
        try:
            try:
                result = await self._work()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if self._failure is not None:
                    await _maybe_await(self._failure(exc))
                else:
                    self._ops.report(failure_notice(self.what, exc, self.server))
                return
            if self._success is not None:
                await _maybe_await(self._success(result))
        finally:
            if self._finally is not None:
                self._finally()


async def _maybe_await(value: Any) -> None:
    if asyncio.iscoroutine(value):
        await value


class Ops:
    """Keeps the GUI's background operations; failures without a handler become notices."""

    def __init__(self, notices: NoticeSink | None = None) -> None:
        self._tasks: set[asyncio.Task[None]] = set()
        self.notices = notices

    def op(
        self,
        work: Callable[[], Coroutine[Any, Any, T]],
        what: str,
        *,
        server: str | None = None,
    ) -> Op[T]:
        return Op(self, work, what, server=server)

    def spawn(
        self,
        coro: Coroutine[Any, Any, Any],
        what: str,
        *,
        server: str | None = None,
        failure: Callable[[Exception], Any] | None = None,
    ) -> asyncio.Task[None]:
        """Run ``coro`` as an operation ``what``: kept alive, its failure a notice (or
        ``failure``'s to handle)."""

        async def work() -> Any:
            return await coro

        op = Op(self, work, what, server=server)
        if failure is not None:
            op.failure(failure)
        task = op.run()
        # Cancelled before it started, ``coro`` never ran: close it (no "never awaited").
        task.add_done_callback(lambda _t: coro.close())
        return task

    def _keep(self, coro: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._done)
        return task

    def _done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            # a bug in a success/failure callback: never silent
            log.error("a background operation failed", exc_info=task.exception())

    def report(self, notice: Notice) -> None:
        if self.notices is not None:
            self.notices(notice)
        else:
            log.warning("%s", notice.text)

    @property
    def running(self) -> int:
        return len(self._tasks)

    def cancel_all(self) -> None:
        for task in list(self._tasks):
            with contextlib.suppress(RuntimeError):
                task.cancel()

    async def settle(self, wait_s: float) -> bool:
        """Wait up to ``wait_s`` seconds for the running operations (and any they start)
        to end by themselves, cancelling none: a save finishing at quit. True when all did."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait_s
        while self._tasks:
            left = deadline - loop.time()
            if left <= 0:
                return False
            await asyncio.wait(list(self._tasks), timeout=left)
        return True

    async def drain(self) -> None:
        """Cancel every operation and wait until they ended (shutdown)."""
        tasks = list(self._tasks)
        self.cancel_all()
        for task in tasks:
            with contextlib.suppress(BaseException):
                await task
