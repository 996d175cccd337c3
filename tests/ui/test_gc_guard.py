"""Cyclic garbage made on any thread is collected on the GUI thread, not where it dropped."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from typing import ClassVar

import pytest
from PySide6.QtCore import QObject

from portico.ui.gc_guard import GarbageCollector
from portico.ui.loop import ensure_application


class Cycle:
    """A QObject kept alive only by a reference cycle; records where it was finalized."""

    finalized_in: ClassVar[list[str]] = []

    def __init__(self) -> None:
        self.me = self
        self.qobject = QObject()

    def __del__(self) -> None:
        Cycle.finalized_in.append(threading.current_thread().name)


@pytest.fixture
def collector() -> Iterator[GarbageCollector]:
    ensure_application()
    guard = GarbageCollector(interval_ms=10)
    guard.start()
    yield guard
    guard.stop()


def test_automatic_collection_is_off_and_back_on_after_stop() -> None:
    ensure_application()
    guard = GarbageCollector()
    guard.start()
    assert not gc.isenabled()
    guard.stop()
    assert gc.isenabled()


def test_garbage_dropped_on_a_worker_thread_dies_on_the_gui_thread(
    collector: GarbageCollector,
) -> None:
    Cycle.finalized_in.clear()

    def worker() -> None:
        Cycle()  # dropped at once; only the cycle keeps it
        # Plenty of allocations: with automatic collection on, one would run right here.
        junk = [[object()] for _ in range(50_000)]
        del junk

    thread = threading.Thread(target=worker, name="runtime-like")
    thread.start()
    thread.join()
    assert Cycle.finalized_in == []  # nothing collected on the worker
    collector.thresholds = (0, 0, 0)  # make a collection due at the next tick
    assert collector.check() >= 0
    assert Cycle.finalized_in == [threading.main_thread().name]


def test_while_busy_only_the_youngest_is_collected_and_the_deep_sweep_gets_the_rest(
    collector: GarbageCollector,
) -> None:
    Cycle.finalized_in.clear()
    collector.thresholds = (0, 0, 0)
    old = Cycle()
    gc.collect(1)  # alive: promoted to the oldest generation
    del old  # now garbage that only a full collection finds
    for _ in range(12):  # young collections enough to make a full one due
        gc.collect(0)
        gc.collect(1)
    collector.set_busy(True)
    assert collector.check() == 0  # the youngest generation only
    assert Cycle.finalized_in == []
    assert gc.get_freeze_count() > 0  # survivors are not walked again while busy
    collector.set_busy(False)
    collector._last_deep -= 10_000  # the deep sweep is due
    for _ in range(12):
        gc.collect(0)
        gc.collect(1)
    assert collector.check() == 2
    assert Cycle.finalized_in == [threading.main_thread().name]
