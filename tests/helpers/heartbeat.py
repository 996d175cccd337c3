"""How long the GUI loop went without running a 10 ms QTimer tick (GUI stall checks).

A gap counts the time the process could have run: where the kernel reports it (Linux's
``/proc/<pid>/task/*/schedstat``), the longest time one of this process's threads sat
ready in a run queue while other processes had the CPUs is taken off the gap. Other test
workers, a CPU hog beside the suite or a loaded CI machine then no longer look like a
stall, while anything the process itself does (work on the GUI thread, a worker thread
holding the GIL, a blocking wait) still counts in full. The longest wait of one thread,
not the sum over threads: threads that waited at the same time took the gap's time
once, so the sum would excuse a real stall; the longest one never excuses more than the
gap lost to one thread's waiting. On a quiet machine nothing is taken off."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

_TASKS = Path(f"/proc/{os.getpid()}/task")


def run_queue_waits() -> dict[str, int] | None:
    """Each thread's total time spent ready to run but waiting for a CPU (ns), or None
    where the platform does not say."""
    try:
        tids = os.listdir(_TASKS)
    except OSError:
        return None
    waits: dict[str, int] = {}
    for tid in tids:
        try:
            with open(_TASKS / tid / "schedstat", "rb") as f:
                waits[tid] = int(f.read().split()[1])
        except (OSError, IndexError, ValueError):
            continue  # the thread ended while being read
    return waits


def waited_between(before: dict[str, int] | None, after: dict[str, int] | None) -> float:
    """The longest time (s) one of the process's threads waited for a CPU between two
    readings (a thread started in between counts all its waiting; one that ended, none)."""
    if before is None or after is None:
        return 0.0
    return max((ns - before.get(tid, 0) for tid, ns in after.items()), default=0) / 1e9


class Heartbeat:
    """Records the longest gap between 10 ms ticks of a QTimer on the GUI loop, without
    the time the process waited for a CPU (see the module's docstring)."""

    def __init__(self) -> None:
        from PySide6.QtCore import QTimer

        self.timer = QTimer()
        self.timer.setInterval(10)
        self.timer.timeout.connect(self._tick)
        self.last = time.perf_counter()
        self.last_waits = run_queue_waits()
        self.gaps: list[float] = []
        self.starved: list[float] = []  # per gap: the seconds taken off it

    def start(self) -> None:
        self.gaps.clear()
        self.starved.clear()
        self.last = time.perf_counter()
        self.last_waits = run_queue_waits()
        self.timer.start()

    def stop(self) -> float:
        """The longest gap (ms)."""
        self.timer.stop()
        return max(self.gaps, default=0.0) * 1000

    @property
    def starved_ms(self) -> float:
        """The time taken off the longest gap (ms): how loaded the machine was then."""
        if not self.gaps:
            return 0.0
        return self.starved[self.gaps.index(max(self.gaps))] * 1000

    def _tick(self) -> None:
        now = time.perf_counter()
        waits = run_queue_waits()
        starved = min(waited_between(self.last_waits, waits), now - self.last)
        self.gaps.append(now - self.last - starved)
        self.starved.append(starved)
        self.last = now
        self.last_waits = waits


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
