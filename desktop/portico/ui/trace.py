"""Launch timestamps on stderr, when ``PORTICO_TRACE_LAUNCH`` is set (benchmarks and
installers/check read them; nothing is printed otherwise).

Each line is ``portico-trace {"phase": …, "t": …, "cpu": …}``: ``t`` is seconds since the
epoch time the variable holds (the launcher's clock, so it compares with what an outside
observer saw), or since the process started when it holds anything else ("1"); ``cpu`` is the
process's CPU time so far, which does not depend on how loaded the machine is.
"""

from __future__ import annotations

import json
import os
import sys
import time

TRACE_ENV = "PORTICO_TRACE_LAUNCH"


def _process_start() -> float:
    """The process's start as an epoch time (Linux /proc), else now."""
    try:
        with open("/proc/self/stat", encoding="ascii") as handle:
            ticks = int(handle.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime", encoding="ascii") as handle:
            uptime = float(handle.read().split()[0])
    except (OSError, ValueError, IndexError):
        return time.time()
    return time.time() - uptime + ticks / os.sysconf("SC_CLK_TCK")


def _origin() -> float | None:
    value = os.environ.get(TRACE_ENV)
    if not value:
        return None
    try:
        epoch = float(value)
    except ValueError:
        epoch = 0.0
    return epoch if epoch > 1e9 else _process_start()


_ORIGIN = _origin()


def trace(phase: str) -> None:
    if _ORIGIN is None:
        return
    line = {
        "phase": phase,
        "t": round(time.time() - _ORIGIN, 4),
        "cpu": round(time.process_time(), 4),
    }
    print("portico-trace " + json.dumps(line), file=sys.stderr, flush=True)
