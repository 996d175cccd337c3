"""Helpers for async UI tests (no nested Qt loops)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any


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
