"""What the page widgets share: typed calls to the runtime side, HTML helpers."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QTextBrowser

from portico.ui.facade import RuntimeThread
from portico.ui.ops import NoRuntime, Op, Ops
from portico.ui.text import rich

if TYPE_CHECKING:
    from portico.ui.runtime_thread.page_service import PageService

T = TypeVar("T")

__all__ = ["NoRuntime", "PageBackend", "browser", "esc", "status_label"]


class PageBackend:
    """Typed calls into ``session.pages`` (a :class:`PageService`) on the runtime thread:
    ``await backend.call(lambda pages: pages.get_prompt(server, name, args))``."""

    def __init__(
        self, runtime: RuntimeThread, session: Callable[[], Any], ops: Ops | None = None
    ) -> None:
        self.runtime = runtime
        self._session = session
        self.ops = ops or Ops()

    @property
    def session(self) -> Any:
        return self._session()

    @property
    def available(self) -> bool:
        return self.session is not None and self.runtime.is_running

    async def call(self, fn: Callable[[PageService], Awaitable[T]]) -> T:
        session = self.session
        if session is None or not self.runtime.is_running:
            raise NoRuntime("The server runtime is not running.")
        pages: PageService = session.pages

        async def on_runtime() -> T:
            return await fn(pages)

        return await self.runtime.submit(on_runtime())

    def op(
        self, fn: Callable[[PageService], Awaitable[T]], what: str, *, server: str | None = None
    ) -> Op[T]:
        """A background operation around one call (``.success(...).run()``)."""
        return self.ops.op(lambda: self.call(fn), what, server=server)

    def cancel_all(self) -> None:
        self.ops.cancel_all()


def esc(text: object) -> str:
    """``text`` (a server's or a config's) for HTML the pages compose."""
    return rich(text)


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
