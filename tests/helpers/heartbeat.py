"""How long the GUI loop went without running a 10 ms QTimer tick (GUI stall checks)."""

from __future__ import annotations

import time


class Heartbeat:
    """Records the longest gap between 10 ms ticks of a QTimer on the GUI loop."""

    def __init__(self) -> None:
        from PySide6.QtCore import QTimer

        self.timer = QTimer()
        self.timer.setInterval(10)
        self.timer.timeout.connect(self._tick)
        self.last = time.perf_counter()
        self.gaps: list[float] = []

    def start(self) -> None:
        self.gaps.clear()
        self.last = time.perf_counter()
        self.timer.start()

    def stop(self) -> float:
        self.timer.stop()
        return max(self.gaps, default=0.0) * 1000

    def _tick(self) -> None:
        now = time.perf_counter()
        self.gaps.append(now - self.last)
        self.last = now
