"""Cyclic garbage is collected on the GUI thread only, in slices the GUI does not feel.

Python runs its cyclic collector in whichever thread happens to allocate when a threshold
is crossed. In the app that is often the runtime thread; a QObject caught in a reference
cycle (a widget whose signal is connected to a closure over itself, an old loop's timers)
would then be destroyed off the GUI thread, which Qt answers with "Timers cannot be
stopped from another thread" and, a little later, a segfault. So automatic collection is
switched off and a GUI-thread timer collects whatever generation is due.

A full collection walks every object the app holds (80-150 ms here, a GUI stall), so:
- the timer checks often (young generations stay small, a few ms to collect);
- while the app is busy (a chat answer streams) only the youngest generation is
  collected and its survivors are frozen; older generations wait until the turn ends;
- at start and after a full collection the survivors are frozen (``gc.freeze``): the next full
  collection only walks what was allocated since. Once every DEEP_EVERY seconds, when
  idle, the frozen objects are unfrozen and walked too, so no cycle among them lives on.
"""

from __future__ import annotations

import gc
import time

from PySide6.QtCore import QObject, QTimer

INTERVAL_MS = 100
DEEP_EVERY = 600.0  # seconds between collections that also walk the frozen objects


class GarbageCollector(QObject):
    def __init__(self, parent: QObject | None = None, interval_ms: int = INTERVAL_MS) -> None:
        super().__init__(parent)
        self.thresholds = gc.get_threshold()
        self.collections = 0
        self.busy = False
        self._last_deep = time.monotonic()
        self._timer = QTimer(self)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self.check)

    def start(self) -> None:
        gc.disable()
        # What exists now (modules, the window) lives as long as the app: never walk it
        # again until the deep sweep (a freeze costs nothing; a full collection ~100 ms).
        gc.freeze()
        self._last_deep = time.monotonic()
        self._timer.start()

    def stop(self) -> None:
        self._timer.stop()
        gc.unfreeze()
        gc.enable()

    def set_busy(self, busy: bool) -> None:
        """While busy (a turn streams), full collections wait."""
        self.busy = busy

    def check(self) -> int:
        """Collect the oldest generation whose threshold was crossed; return it (or -1)."""
        counts = gc.get_count()
        if self.busy:
            if counts[0] <= self.thresholds[0]:
                return -1
            # The youngest only, and what survives it is not walked again until the deep
            # sweep: while an answer streams the app allocates ~100k objects a second,
            # and a middle-generation collection walking them took 45-65 ms.
            gc.collect(0)
            gc.freeze()
            self.collections += 1
            return 0
        for generation in (2, 1, 0):
            if counts[generation] > self.thresholds[generation]:
                self._collect(generation)
                return generation
        return -1

    def _collect(self, generation: int) -> None:
        if generation < 2:
            gc.collect(generation)
        else:
            deep = time.monotonic() - self._last_deep >= DEEP_EVERY
            if deep:
                gc.unfreeze()
                self._last_deep = time.monotonic()
            gc.collect(2)
            gc.freeze()
        self.collections += 1
