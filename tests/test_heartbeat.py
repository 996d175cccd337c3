"""tests/helpers/heartbeat.py: a gap counts only the time the process could have run. The
time its threads waited for a CPU, taken by other processes, is read from the kernel and
taken off; on a quiet machine nothing is."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from tests.helpers.heartbeat import run_queue_waits, waited_between

HOG = "import os, sys\nos.sched_setaffinity(0, {int(sys.argv[1])})\nwhile True: pass\n"


def test_the_longest_wait_of_one_thread_counts_not_the_sum() -> None:
    before = {"1": 1_000_000, "2": 5_000_000}
    after = {"1": 41_000_000, "2": 35_000_000, "3": 7_000_000}  # thread 3 started between
    assert waited_between(before, after) == pytest.approx(0.040)
    assert waited_between(None, after) == 0.0  # a platform that does not say


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs CPU affinity")
def test_a_thread_kept_off_its_cpu_by_other_processes_is_seen_waiting() -> None:
    if run_queue_waits() is None:
        pytest.skip("this kernel does not report run-queue waits")
    cpu = min(os.sched_getaffinity(0))
    mine = os.sched_getaffinity(0)
    hogs = [subprocess.Popen([sys.executable, "-c", HOG, str(cpu)]) for _ in range(3)]
    try:
        os.sched_setaffinity(0, {cpu})
        time.sleep(0.3)  # the hogs are running on that CPU
        before = run_queue_waits()
        end = time.perf_counter() + 0.4
        while time.perf_counter() < end:
            pass  # runnable all along: a share of the CPU, the rest spent waiting
        waited = waited_between(before, run_queue_waits())
    finally:
        os.sched_setaffinity(0, mine)
        for hog in hogs:
            hog.kill()
            hog.wait()
    assert waited > 0.15, f"waited {waited * 1000:.0f} ms of 400 ms beside 3 busy processes"
