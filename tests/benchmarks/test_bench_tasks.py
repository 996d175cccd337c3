"""Polling overhead of the tasks extension: a tool call the server answers with a task
(followed with tasks/get at the server's pollIntervalMs) vs the same work as a plain call.

tests/servers/tasking.py over stdio, twice: with tasks (``slow_compute`` becomes a task)
and with ``--no-tasks`` (the same tool sleeps inside the call). The two alternate call by
call. Printed: medians, their ratio, polls per task, the overhead per poll, and the bare
``tasks/get`` round trip. The overhead includes the completion's detection delay (the
task ends between two polls, so up to one interval; half of one on average).
Run: ``python -m pytest tests/benchmarks/test_bench_tasks.py -s`` or as a script.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from portico.config.model import Dialect, Protocol, Scope, ServerSpec, Source, Transport

REPO = Path(__file__).resolve().parents[2]
TASKING = REPO / "tests" / "servers" / "tasking.py"
WORK_SECONDS = 0.5
POLL_MS = 25
ROUNDS = 12


def _spec(name: str, *extra: str) -> ServerSpec:
    return ServerSpec(
        name=name,
        source=Source(Path("/bench/mcp.toml"), 1, Scope.GLOBAL, Dialect.TOML),
        transport=Transport.STDIO,
        command=sys.executable,
        args=(str(TASKING), "stdio", "--poll-ms", str(POLL_MS), *extra),
        protocol=Protocol.AUTO,
        connect_timeout=60.0,
    )


async def bench(rounds: int = ROUNDS) -> dict[str, float]:
    from portico.runtime.connection import Connection
    from portico.runtime.task_events import TaskUpdate
    from portico.runtime.tasks import get_task
    from tests.helpers.calls import calling

    tasked, plain = Connection(_spec("tasked")), Connection(_spec("plain", "--no-tasks"))
    for conn in (tasked, plain):
        await conn.start()
        await conn.wait_settled(90)
    args = {"seconds": WORK_SECONDS, "steps": 5}
    task_times: list[float] = []
    plain_times: list[float] = []
    polls: list[int] = []
    try:
        for _ in range(2):  # warm up both
            await tasked.call_tool("slow_compute", args)
            await plain.call_tool("slow_compute", args)
        for _ in range(rounds):
            heard: list[TaskUpdate] = []
            started = time.perf_counter()
            await tasked.call_tool("slow_compute", args, context=calling(on_task=heard.append))
            task_times.append(time.perf_counter() - started)
            polls.append(heard[-1].polls)
            started = time.perf_counter()
            await plain.call_tool("slow_compute", args)
            plain_times.append(time.perf_counter() - started)
        assert tasked.link.client is not None
        session = tasked.link.client.session
        gets: list[float] = []
        for _ in range(200):
            started = time.perf_counter()
            await get_task(session, heard[0].task_id)
            gets.append(time.perf_counter() - started)
    finally:
        await tasked.stop()
        await plain.stop()
    task, bare = statistics.median(task_times), statistics.median(plain_times)
    per_task = statistics.median(polls)
    overhead = task - bare
    figures = {
        "plain_ms": bare * 1000,
        "task_ms": task * 1000,
        "ratio": task / bare,
        "polls_per_task": per_task,
        "overhead_ms": overhead * 1000,
        "overhead_per_poll_ms": overhead * 1000 / per_task,
        "detection_budget_ms": POLL_MS / 2,
        "tasks_get_ms": statistics.median(gets) * 1000,
    }
    print(
        f"\n{rounds} calls of {WORK_SECONDS:g} s work over stdio, pollIntervalMs {POLL_MS}: "
        f"plain call median {figures['plain_ms']:.1f} ms, as a task {figures['task_ms']:.1f} ms "
        f"(ratio {figures['ratio']:.3f}); {per_task:g} tasks/get per task; overhead "
        f"{figures['overhead_ms']:.1f} ms per task = {figures['overhead_per_poll_ms']:.2f} ms "
        f"per poll (including the completion's detection delay, {POLL_MS / 2:g} ms on "
        f"average); one tasks/get round trip median {figures['tasks_get_ms']:.2f} ms"
    )
    return figures


def test_task_polling_overhead() -> None:
    figures = asyncio.run(bench())
    # Following a task costs a bounded share of the work it waits for: polls are spaced by
    # the server's interval, not issued back to back.
    assert figures["polls_per_task"] <= WORK_SECONDS * 1000 / POLL_MS * 1.5 + 2
    assert figures["ratio"] < 1.5


if __name__ == "__main__":
    os.environ.setdefault("PORTICO_HOME", tempfile.mkdtemp(prefix="portico-bench-"))
    asyncio.run(bench())
