"""What the page widgets share: the way to the runtime, task spawning, HTML helpers."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QTextBrowser

from portico.ui.facade import RuntimeThread

log = logging.getLogger(__name__)


class NoRuntime(RuntimeError):
    """The runtime thread or session is not up (yet)."""


class PageBackend:
    """Calls ``session.pages.<method>(...)`` on the runtime thread from the GUI loop."""

    def __init__(self, runtime: RuntimeThread, session: Callable[[], Any]) -> None:
        self.runtime = runtime
        self._session = session
        self._tasks: set[asyncio.Future[Any]] = set()

    @property
    def session(self) -> Any:
        return self._session()

    @property
    def available(self) -> bool:
        return self.session is not None and self.runtime.is_running

    async def run(self, method: str, *args: Any) -> Any:
        session = self.session
        if session is None or not self.runtime.is_running:
            raise NoRuntime("The server runtime is not running.")

        async def call() -> Any:
            return await getattr(session.pages, method)(*args)

        return await self.runtime.submit(call())

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Future[Any]:
        """Run ``coro`` on the GUI loop, keeping a reference; failures are logged."""
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)

        def done(t: asyncio.Future[Any]) -> None:
            self._tasks.discard(t)
            if not t.cancelled() and t.exception() is not None:
                log.error("a server page task failed", exc_info=t.exception())

        task.add_done_callback(done)
        return task

    def cancel_all(self) -> None:
        for task in list(self._tasks):
            with contextlib.suppress(RuntimeError):
                task.cancel()


def esc(text: object) -> str:
    return (
        str(text)
        .replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
    )


def browser(name: str) -> QTextBrowser:
    view = QTextBrowser()
    view.setOpenLinks(False)
    view.setAccessibleName(name)
    view.setTextInteractionFlags(
        Qt.TextInteractionFlag.TextSelectableByMouse
        | Qt.TextInteractionFlag.TextSelectableByKeyboard
    )
    return view


def status_label(name: str) -> QLabel:
    label = QLabel()
    label.setWordWrap(True)
    label.setAccessibleName(name)
    label.setTextInteractionFlags(
        Qt.TextInteractionFlag.TextSelectableByMouse
        | Qt.TextInteractionFlag.TextSelectableByKeyboard
    )
    return label

