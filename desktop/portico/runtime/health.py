"""A server's health, derived from its activity: call latency (p50 / p95 over the last
hour), errors, reconnects, the time of the last call, and a stdio process's memory.

:class:`HealthRecorder` listens to an :class:`~portico.runtime.activity.ActivityLog`; it
keeps only (time, seconds, failed) per call for the last hour (bounded), so it stays
small whatever the traffic. No Qt here.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from portico.runtime.activity import Exchange

WINDOW = 3600.0  # seconds of calls the figures cover
MAX_CALLS = 10_000  # calls kept at most inside the window
CALL_METHODS = frozenset({"tools/call", "prompts/get", "resources/read"})
CONNECT_METHODS = frozenset({"initialize", "server/discover"})
SPARK_POINTS = 60  # latencies the sparkline shows (the most recent)


@dataclass(frozen=True)
class HealthSnapshot:
    calls: int  # in the window
    errors: int  # failed calls in the window (error replies and error results)
    p50: float | None  # seconds
    p95: float | None
    connects: int  # since the app started (the first one included)
    last_call_at: float | None
    recent: tuple[float, ...] = ()  # the latest call latencies (seconds), oldest first
    memory_bytes: int | None = None  # a stdio server's resident memory (with children)
    connect_seconds: float | None = None

    @property
    def restarts(self) -> int:
        return max(0, self.connects - 1)


def percentile(sorted_values: list[float], fraction: float) -> float | None:
    """Nearest-rank percentile of already sorted values (None when empty)."""
    if not sorted_values:
        return None
    rank = max(1, min(len(sorted_values), math.ceil(fraction * len(sorted_values))))
    return sorted_values[rank - 1]


class HealthRecorder:
    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._calls: deque[tuple[float, float, bool]] = deque(maxlen=MAX_CALLS)
        self._connects = 0
        # Anything sent since the last handshake message: a discover probe and the
        # initialize that falls back after it are one connect, a later handshake another.
        self._talked = True
        self.last_call_at: float | None = None

    def observe(self, entry: Exchange) -> None:
        """An exchange was recorded or completed (the ActivityLog's listener)."""
        if entry.direction != "out" or entry.kind == "response":
            return
        if entry.method in CONNECT_METHODS:
            if entry.duration is None and self._talked:
                self._connects += 1
                self._talked = False
            return
        if entry.duration is None and entry.method != "notifications/initialized":
            self._talked = True
        if entry.kind != "request":
            return
        if entry.method not in CALL_METHODS:
            return
        if entry.duration is None:
            self.last_call_at = entry.time
            return
        failed = entry.error is not None or entry.failed_result
        self._calls.append((entry.time, entry.duration, failed))

    def record_call(self, at: float, seconds: float, failed: bool = False) -> None:
        self.last_call_at = at
        self._calls.append((at, seconds, failed))

    def snapshot(
        self, *, memory_bytes: int | None = None, connect_seconds: float | None = None
    ) -> HealthSnapshot:
        since = self._clock() - WINDOW
        while self._calls and self._calls[0][0] < since:
            self._calls.popleft()
        latencies = sorted(seconds for _, seconds, _ in self._calls)
        recent = tuple(seconds for _, seconds, _ in list(self._calls)[-SPARK_POINTS:])
        return HealthSnapshot(
            calls=len(self._calls),
            errors=sum(1 for *_, failed in self._calls if failed),
            p50=percentile(latencies, 0.50),
            p95=percentile(latencies, 0.95),
            connects=self._connects,
            last_call_at=self.last_call_at,
            recent=recent,
            memory_bytes=memory_bytes,
            connect_seconds=connect_seconds,
        )


def process_memory(pid: int | None) -> int | None:
    """Resident memory of ``pid`` and its children in bytes (None when unknown)."""
    if pid is None:
        return None
    try:
        import psutil
    except ImportError:
        return _proc_rss(pid)
    try:
        proc = psutil.Process(pid)
        total = int(proc.memory_info().rss)
        for child in proc.children(recursive=True):
            try:
                total += int(child.memory_info().rss)
            except psutil.Error:
                continue
        return total
    except psutil.Error:
        return None


def _proc_rss(pid: int) -> int | None:
    """Linux without psutil: VmRSS of the process itself from /proc."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None
