"""Cyclic garbage is collected on the GUI thread only.

Python runs its cyclic collector in whichever thread happens to allocate when a threshold
is crossed. In the app that is often the runtime thread; a QObject caught in a reference
cycle (a widget whose signal is connected to a closure over itself, an old loop's timers)
would then be destroyed off the GUI thread, which Qt answers with "Timers cannot be
stopped from another thread" and, a little later, a segfault. So automatic collection is
switched off and a GUI-thread timer collects whatever generation is due.
"""

from __future__ import annotations

import gc

from PySide6.QtCore import QObject, QTimer

INTERVAL_MS = 1000


class GarbageCollector(QObject):
    def __init__(self, parent: QObject | None = None, interval_ms: int = INTERVAL_MS) -> None:
        super().__init__(parent)
        self.thresholds = gc.get_threshold()
        self.collections = 0
        self._timer = QTimer(self)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self.check)

    def start(self) -> None:
        gc.disable()
        self._timer.start()

    def stop(self) -> None:
        self._timer.stop()
        gc.enable()

    def check(self) -> int:
        """Collect the oldest generation whose threshold was crossed; return it (or -1)."""
        counts = gc.get_count()
        for generation in (2, 1, 0):
            if counts[generation] > self.thresholds[generation]:
                gc.collect(generation)
                self.collections += 1
                return generation
        return -1
