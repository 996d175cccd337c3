"""The one clock of the window: every "N s ago" and "Retrying in N s" reads it.

A single one-second timer; views connect to ``ticked`` and redraw their time-derived text
from the data they already show (no view keeps its own timer or a copy of the time).
The time is read once per tick: every view drawn for that tick (the server list, the
Overview, the tray) counts from the same reading, so they never disagree by a second.
"""

from __future__ import annotations

import time

from PySide6.QtCore import QObject, QTimer, Signal


class Clock(QObject):
    ticked = Signal()

    def __init__(self, parent: QObject | None = None, interval_ms: int = 1000) -> None:
        super().__init__(parent)
        self._reading = time.time()
        self._timer = QTimer(self)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self._tick)
        self._timer.start()

    def _tick(self) -> None:
        self._reading = time.time()
        self.ticked.emit()

    def now(self) -> float:
        """The time of the last tick (``time.time()``): what every view shows now."""
        return self._reading

    @property
    def running(self) -> bool:
        return self._timer.isActive()


_clock: Clock | None = None


def clock() -> Clock:
    """The app's clock (created on first use, on the GUI thread)."""
    global _clock
    if _clock is None:
        _clock = Clock()
    return _clock
