"""The Activity tap's overhead: calls through one Connection with the tap recording vs
paused, alternating call by call in the same run, for a small result (echo) and a large
one (~200 KiB of text). Printed: medians in ms/call, their ratio, and the median of the
ratios of neighbouring calls (robust to drifting load; target <= 1.05). The tap keeps each
message as the SDK built it and serialises it only when a face asks (runtime/activity.py).
Run: ``python -m pytest tests/benchmarks/test_bench_activity.py -s`` or as a script.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from pathlib import Path

from portico.config.model import Config, Dialect, Scope, ServerSpec, Source, Transport

REPO = Path(__file__).resolve().parents[2]
TOOLBOX = REPO / "tests" / "servers" / "toolbox.py"
LARGE_KIB = 200
CASES = {
    "small": ("echo", {"text": "hello"}, 400),
    "large": ("big", {"mib": LARGE_KIB / 1024}, 120),
}
TARGET = 1.05


async def bench() -> dict[str, dict[str, float]]:
    from portico.runtime.hub import Hub

    spec = ServerSpec(
        name="tb",
        source=Source(Path("/bench/mcp.toml"), 1, Scope.GLOBAL, Dialect.TOML),
        transport=Transport.STDIO,
        command=sys.executable,
        args=(str(TOOLBOX), "stdio"),
    )
    figures: dict[str, dict[str, float]] = {}
    async with Hub() as hub:
        await hub.apply(Config(servers=(spec,)))
        conn = hub.connection("tb")
        log = conn.activity
        for case, (tool, arguments, calls) in CASES.items():
            for _ in range(10):  # warm up both paths
                await conn.call_tool(tool, arguments)
            on: list[float] = []
            off: list[float] = []
            for i in range(calls * 2):
                # Alternate (and swap the order each round) so drifting load hits both.
                paused = (i % 2 == 0) == ((i // 2) % 2 == 0)
                log.paused = paused
                started = time.perf_counter()
                await conn.call_tool(tool, arguments)
                (off if paused else on).append(time.perf_counter() - started)
            log.paused = False
            tapped, bare = statistics.median(on), statistics.median(off)
            pairs = statistics.median(a / b for a, b in zip(on, off, strict=True))
            figures[case] = {
                "on_ms": tapped * 1000,
                "off_ms": bare * 1000,
                "ratio": tapped / bare,
                "pair_ratio": pairs,
            }
            kept = log.snapshot()[-1]
            print(
                f"\n{case} ({tool}, reply {kept.reply_size / 1024:.1f} KiB), {calls} calls "
                f"each way: tap recording {figures[case]['on_ms']:.3f} ms/call, paused "
                f"{figures[case]['off_ms']:.3f} ms/call, ratio of medians "
                f"{figures[case]['ratio']:.3f}, median of neighbour ratios "
                f"{figures[case]['pair_ratio']:.3f} (target <= {TARGET})"
            )
    return figures


def test_activity_tap_overhead() -> None:
    figures = asyncio.run(bench())
    for case, numbers in figures.items():
        assert numbers["pair_ratio"] <= TARGET, (case, numbers)


if __name__ == "__main__":
    asyncio.run(bench())
