"""How long the GUI loop went without running a 10 ms QTimer tick (GUI stall checks)."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager


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


@contextmanager
def as_the_app_runs() -> Iterator[None]:
    """The GIL switch interval and the cyclic-garbage policy of the running app (its
    ``main`` and ``Desktop.start``). Without the latter, Python's automatic collector may run
    a full collection in a worker thread, walking every object the test process holds
    (500+ ms late in a long run): a stall of the test process, not of what is measured."""
    from portico.ui.gc_guard import GarbageCollector
    from portico.ui.loop import GIL_SWITCH_INTERVAL

    before = sys.getswitchinterval()
    collector = GarbageCollector()
    sys.setswitchinterval(GIL_SWITCH_INTERVAL)
    collector.start()
    try:
        yield
    finally:
        collector.stop()
        sys.setswitchinterval(before)
