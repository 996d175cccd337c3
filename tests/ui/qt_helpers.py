"""Helpers for async UI tests (no nested Qt loops)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Iterator
from typing import Any

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication, QWidget


async def until(
    condition: Callable[[], Any],
    timeout: float = 10.0,  # noqa: ASYNC109
    what: str = "condition",
) -> Any:
    """Poll ``condition`` on the running loop until it is truthy; fail after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        await asyncio.sleep(0.01)


def gone(widget: Any) -> bool:
    """True when a widget is closed or already deleted (dialogs are deleteLater'd)."""
    import shiboken6

    return not shiboken6.isValid(widget) or not widget.isVisible()


class _WindowsShown(QObject):
    def __init__(self) -> None:
        super().__init__()
        self.shown: list[str] = []

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Show and isinstance(watched, QWidget) and watched.isWindow():
            self.shown.append(f"{type(watched).__name__} {watched.accessibleName()!r}")
        return False


@contextlib.contextmanager
def windows_shown() -> Iterator[list[str]]:
    """The top-level windows shown inside the block (a parentless widget made visible is
    one: a window flashes on the desktop, and the main window may lose activation)."""
    spy = _WindowsShown()
    app = QApplication.instance()
    assert app is not None
    app.installEventFilter(spy)
    try:
        yield spy.shown
    finally:
        app.removeEventFilter(spy)
