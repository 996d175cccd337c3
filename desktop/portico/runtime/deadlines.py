"""Call deadlines armed only when a call outlives ``ARM_AFTER``.

Every tool call runs under an ``asyncio.timeout`` (the server's ``timeout``, 30 s by
default), and nearly every call ends long before it: arming a timer for each call costs
a timer handle, its cancel and the loop's heap of cancelled handles (~300 Python bytecodes
a call, about 3 % of a bare ``call_tool``). So a call enters ``asyncio.timeout(None)`` and
notes its due time here; one timer per connection arms the deadlines of the calls still
running after ``ARM_AFTER`` seconds, before any of them is due (a shorter timeout is armed
at once), so a deadline fires at the same moment either way. A call that extends its own
deadline (progress, a task's poll) arms it directly with ``reschedule``.
"""

from __future__ import annotations

import asyncio
import contextlib

ARM_AFTER = 1.0  # seconds a call runs before its deadline gets a timer of its own


class LazyDeadlines:
    """The unarmed deadlines of one connection's running calls. Loop thread only."""

    def __init__(self, after: float = ARM_AFTER) -> None:
        self.after = after
        self._due: dict[asyncio.Timeout, float] = {}
        self._timer: asyncio.TimerHandle | None = None

    def add(self, timeout: asyncio.Timeout, due: float) -> None:
        """``timeout`` (entered with ``None``) must expire at loop time ``due``."""
        loop = asyncio.get_running_loop()
        if due - loop.time() <= self.after:  # sooner than the timer below: arm it now
            timeout.reschedule(due)
            return
        self._due[timeout] = due
        if self._timer is None:
            self._timer = loop.call_later(self.after, self._arm)

    def discard(self, timeout: asyncio.Timeout) -> None:
        """The call ended (call before leaving the ``async with``)."""
        self._due.pop(timeout, None)

    def _arm(self) -> None:
        self._timer = None
        due, self._due = self._due, {}
        for timeout, when in due.items():
            if timeout.when() is None:  # not armed by the call itself meanwhile
                with contextlib.suppress(RuntimeError):  # it is leaving its block
                    timeout.reschedule(when)
