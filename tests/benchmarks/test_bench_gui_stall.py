"""GUI stall probe: a 10 ms QTimer heartbeat on the app's qasync loop while the runtime
thread connects 20 stdio servers, runs 1,000 tool calls, and receives a 10 MiB result.

Also prints the per-call cost of a tool call driven from the GUI loop through the facade
(RuntimeThread.submit -> Connection.call_tool) vs a bare SDK ``Client.call_tool`` on a
plain asyncio loop, against the same tiny stdio server. The machine is shared and noisy,
so the calls run in interleaved rounds (bare, runtime, then each facade variant) and the
figures are per-call medians over all rounds with the spread of the round medians. The
variants flip the three knobs at run time, in one process, on one loop:

- ``fast_calls``: PorticoEventLoop's ready queue + one posted event vs qasync's timer per
  callback (env PORTICO_LOOP_FAST_CALLS=0 turns it off in the app);
- ``direct``: RuntimeThread.submit settling the GUI future with one call_soon_threadsafe
  vs run_coroutine_threadsafe + wrap_future (env PORTICO_FACADE_DIRECT=0);
- ``switch``: sys.setswitchinterval (Python's 5 ms default vs the app's setting).

Run: ``QT_QPA_PLATFORM=offscreen python -m pytest tests/benchmarks/test_bench_gui_stall.py -s``
(or as a script; BENCH_ROUNDS / BENCH_CALLS change the rounds and calls per round).
Goals from the issue: longest gap < 100 ms (goal 50 ms); ratio <= 1.2.

Measured (2 shared cores, PySide6 6.11.3, Python 3.11; 3 runs at load 0.3-0.7, per-call
medians): bare SDK 0.29-0.31 ms; Connection.call_tool on the runtime loop 0.32-0.34 ms;
the same call hopped from a plain asyncio loop in another thread (no Qt at all)
0.64-0.68 ms (2.2-2.3x); the facade before 0.72-0.76 ms (2.4-2.5x), after 0.66-0.70 ms
(2.2-2.3x). So the facade now costs about what any thread hop costs here: two wake-ups of
an idle thread per call, plus the runtime thread running colder (its CPU per call goes
from 0.35 to 0.55-0.6 ms once it idles between calls, facade or not). That puts 1.2x out
of reach for a ~0.3 ms call (by arithmetic, a fixed 0.35-0.4 ms fits in 1.2x only for
calls of ~2 ms and up). An empty round trip (no MCP): 99 -> 58 us median at load ~2,
177 -> 143 us at load 0.8. The switch interval does not change the per-call cost, but
with 5 ms a runtime thread busy in Python bursts of 0.3-0.8 ms starved the GUI thread for
130-400 ms (heartbeat), also with 1 ms and 0.5 ms for 0.3 ms bursts; 0.2 ms keeps it at
11-13 ms with the same runtime throughput. Longest GUI gaps after: connecting 20 servers
13-19 ms, 1,000 calls 11-12 ms, a 10 MiB result 16-22 ms (24-29 ms before).
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.helpers.heartbeat import Heartbeat
from tests.helpers.servers import TINY

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

REPO = Path(__file__).resolve().parents[2]
SERVERS = 20
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "5"))
CALLS_PER_ROUND = int(os.environ.get("BENCH_CALLS", "200"))
CALLS = ROUNDS * CALLS_PER_ROUND  # per variant
BIG = 10 * 1024 * 1024
BUSY_ROUNDS = int(os.environ.get("BENCH_BUSY_ROUNDS", "3"))
BUSY_SECONDS = 0.4
BUSY_CHUNKS = (0.0003, 0.0008)  # s of Python between the runtime loop's GIL releases
DEFAULT_SWITCH = 0.005  # Python's default sys.getswitchinterval()
BUSY_SWITCHES = (DEFAULT_SWITCH, 0.001, 0.0005, 0.0002)


@dataclass(frozen=True)
class Knobs:
    fast_calls: bool
    direct: bool
    switch: float


def _variants() -> dict[str, Knobs]:
    from portico.ui.loop import GIL_SWITCH_INTERVAL

    after = GIL_SWITCH_INTERVAL
    return {
        "before (qasync timers, wrap_future, 5 ms)": Knobs(False, False, DEFAULT_SWITCH),
        f"after (ready queue, direct, {after * 1e3:g} ms)": Knobs(True, True, after),
        "after but qasync timers": Knobs(False, True, after),
        "after but wrap_future": Knobs(True, False, after),
        "after but 5 ms switch": Knobs(True, True, DEFAULT_SWITCH),
    }


@dataclass
class Series:
    """Per-call latencies (ms) of one kind of call, pooled over the rounds."""

    calls: list[float] = field(default_factory=list)
    round_medians: list[float] = field(default_factory=list)
    round_means: list[float] = field(default_factory=list)
    gap_ms: float = 0.0

    def add(self, latencies: list[float]) -> None:
        self.calls.extend(latencies)
        self.round_medians.append(statistics.median(latencies))
        self.round_means.append(statistics.fmean(latencies))

    @property
    def median(self) -> float:
        return statistics.median(self.calls)

    @property
    def mean(self) -> float:
        return statistics.fmean(self.calls)

    def spread(self) -> str:
        return f"{min(self.round_medians):.3f}-{max(self.round_medians):.3f}"


def _write_config(home: Path) -> None:
    config = home / "config"
    config.mkdir(parents=True, exist_ok=True)
    py, tiny = sys.executable.replace("\\", "/"), str(TINY).replace("\\", "/")
    body = "discovery_concurrency = 4\n\n" + "".join(
        f'[mcp.s{i}]\ncommand = ["{py}", "{tiny}", "--tools", "3", "--name", "s{i}"]\n\n'
        for i in range(SERVERS)
    )
    (config / "mcp.toml").write_text(body, encoding="utf-8")


async def _timed(calls: int, call: Any) -> list[float]:
    out = []
    for _ in range(calls):
        t0 = time.perf_counter()
        await call()
        out.append((time.perf_counter() - t0) * 1000)
    return out


async def _bare_sdk(calls: int) -> float:
    """The old cross-check: a bare client on asyncio.run in the main thread (mean ms)."""
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=[str(TINY)])
    async with Client(params, mode="legacy") as client:
        await client.call_tool("echo", {"text": "warm"})
        start = time.perf_counter()
        for _ in range(calls):
            await client.call_tool("echo", {"text": "hello"})
        return (time.perf_counter() - start) / calls * 1000


async def _through_app(figures: dict[str, Any]) -> None:
    from mcp import Client, StdioServerParameters

    from portico.ui.bridge import EventBridge
    from portico.ui.facade import RuntimeThread
    from portico.ui.prompter import QtPrompter
    from portico.ui.runtime_thread.session import RuntimeSession

    loop = asyncio.get_running_loop()
    variants = _variants()

    def apply(knobs: Knobs) -> None:
        loop.fast_calls = knobs.fast_calls
        runtime.direct = knobs.direct
        sys.setswitchinterval(knobs.switch)

    beat = Heartbeat()
    runtime = RuntimeThread()
    runtime.start()
    try:
        apply(variants[next(k for k in variants if k.startswith("after ("))])
        session = await runtime.submit(RuntimeSession.create(QtPrompter(), EventBridge()))
        await runtime.submit(session.load(None))
        beat.start()
        start = time.perf_counter()
        figures["summary"] = await runtime.submit(session.apply())
        figures["connect_s"] = time.perf_counter() - start
        figures["connect_gap_ms"] = beat.stop()

        conn = session.hub.connection("s0")
        await runtime.submit(conn.call_tool("echo", {"text": "warm"}))

        # A bare SDK client on the runtime loop (plain asyncio), interleaved with the rest.
        bare_client: list[Any] = []
        bare_ready = asyncio.Event()  # on the GUI loop
        bare_done: list[asyncio.Event] = []  # on the runtime loop

        async def own_bare() -> None:
            params = StdioServerParameters(command=sys.executable, args=[str(TINY)])
            async with Client(params, mode="legacy") as client:
                await client.call_tool("echo", {"text": "warm"})
                bare_client.append(client)
                bare_done.append(asyncio.Event())
                loop.call_soon_threadsafe(bare_ready.set)
                await bare_done[0].wait()

        owner = runtime.submit(own_bare())
        await bare_ready.wait()
        client = bare_client[0]

        async def bare_round() -> list[float]:
            return await _timed(CALLS_PER_ROUND, lambda: client.call_tool("echo", {"text": "hi"}))

        async def runtime_round() -> list[float]:
            return await _timed(CALLS_PER_ROUND, lambda: conn.call_tool("echo", {"text": "hi"}))

        def plain_hop() -> list[float]:
            """The same thread hop from a plain asyncio loop in another thread (no Qt)."""

            async def drive() -> list[float]:
                return await _timed(
                    CALLS_PER_ROUND,
                    lambda: asyncio.wrap_future(
                        asyncio.run_coroutine_threadsafe(
                            conn.call_tool("echo", {"text": "hi"}), runtime.loop
                        )
                    ),
                )

            return asyncio.run(drive())

        series: dict[str, Series] = {"bare": Series(), "runtime": Series(), "hop": Series()}
        series.update({name: Series() for name in variants})
        for _ in range(ROUNDS):
            apply(variants[next(iter(variants))])  # the GUI idles: only the switch matters
            series["bare"].add(await runtime.submit(bare_round()))
            series["runtime"].add(await runtime.submit(runtime_round()))
            series["hop"].add(await asyncio.to_thread(plain_hop))
            for name, knobs in variants.items():
                apply(knobs)
                beat.start()
                latencies = await _timed(
                    CALLS_PER_ROUND,
                    lambda: runtime.submit(conn.call_tool("echo", {"text": "hi"})),
                )
                series[name].gap_ms = max(series[name].gap_ms, beat.stop())
                series[name].add(latencies)
        runtime.call_soon(bare_done[0].set)
        await owner
        figures["series"] = series

        before, after = next(iter(variants)), next(k for k in variants if k.startswith("after ("))
        figures["big_ok"] = True
        for name in (before, after, after, before):  # ABBA: neither goes first only
            apply(variants[name])
            beat.start()
            start = time.perf_counter()
            result = await runtime.submit(conn.call_tool("echo", {"text": "x" * BIG}))
            took, gap = time.perf_counter() - start, beat.stop()
            old_took, old_gap = figures.setdefault("big", {}).get(name, (0.0, 0.0))
            figures["big"][name] = (max(took, old_took), max(gap, old_gap))
            figures["big_ok"] &= len(result.content[0].text) == BIG
        figures["busy"] = await _busy_runtime(runtime, beat, apply, variants)
        await runtime.shutdown(session.close)
    finally:
        runtime.stop()


async def _busy_python(seconds: float, chunk_s: float) -> int:
    """Pure-Python work on the runtime loop in short chunks (like parsing a burst of
    messages): the GUI thread must win the GIL from it for every Qt event it handles."""
    doc = {"numbers": list(range(50)), "text": "x" * 100}
    end = time.perf_counter() + seconds
    done = 0
    while time.perf_counter() < end:
        chunk = time.perf_counter() + chunk_s
        while time.perf_counter() < chunk:
            json.loads(json.dumps(doc))
            done += 1
        await asyncio.sleep(0)
    return done


async def _busy_runtime(
    runtime: Any, beat: Heartbeat, apply: Any, variants: dict[str, Knobs]
) -> dict[tuple[float, float], dict[str, list[float]]]:
    """The switch-interval knob: heartbeat gaps while the runtime thread runs Python.

    The GIL waiter asks for a forced switch only after a whole interval passes *without*
    a hand-over; a runtime loop that drops and retakes the GIL (select) more often than
    that resets the wait each time, so the GUI thread can starve for the whole burst.
    """
    after = variants[next(k for k in variants if k.startswith("after ("))]
    out: dict[tuple[float, float], dict[str, list[float]]] = {}
    for _ in range(BUSY_ROUNDS):
        for chunk in BUSY_CHUNKS:
            for switch in BUSY_SWITCHES:
                apply(Knobs(after.fast_calls, after.direct, switch))
                beat.start()
                done = await runtime.submit(_busy_python(BUSY_SECONDS, chunk))
                longest = beat.stop()
                row = out.setdefault((chunk, switch), {"max": [], "rate": []})
                row["max"].append(longest)
                row["rate"].append(done / BUSY_SECONDS)
        apply(after)
    return out


def run() -> dict[str, Any]:
    from portico.ui.loop import PorticoEventLoop, ensure_application

    switch = sys.getswitchinterval()
    with tempfile.TemporaryDirectory() as home:
        os.environ["PORTICO_HOME"] = home
        _write_config(Path(home))
        app = ensure_application()
        app.setQuitOnLastWindowClosed(False)
        figures: dict[str, Any] = {}
        try:
            with asyncio.Runner(loop_factory=lambda: PorticoEventLoop(app)) as runner:
                runner.run(_through_app(figures))
        finally:
            sys.setswitchinterval(switch)
        bare = [asyncio.run(_bare_sdk(CALLS_PER_ROUND)) for _ in range(2)]
        figures["bare_main_ms"] = statistics.median(bare)
    return figures


def report(f: dict[str, Any]) -> None:
    series: dict[str, Series] = f["series"]
    bare = series["bare"]
    print(f"\n{SERVERS} servers connected in {f['connect_s']:.1f} s: {f['summary']}")
    print(f"longest GUI gap while connecting: {f['connect_gap_ms']:.1f} ms")
    for name, (seconds, gap) in f["big"].items():
        print(
            f"longest GUI gap, 10 MiB result (worst of 2): {gap:5.1f} ms ({seconds:.2f} s) [{name}]"
        )
    print(
        f"per call, {ROUNDS} interleaved rounds x {CALLS_PER_ROUND} calls; median ms "
        "(range of round medians), mean ms, ratio to bare by median / by mean, GUI gap:"
    )
    for name, s in series.items():
        label = {
            "bare": "bare SDK Client.call_tool, plain asyncio loop",
            "runtime": "Connection.call_tool on the runtime loop",
            "hop": "the same via a plain asyncio loop in another thread",
        }.get(name, f"facade from the GUI loop: {name}")
        gap = f"  gap {s.gap_ms:5.1f} ms" if name in _variants() else ""
        print(
            f"  {label:<62} {s.median:.3f} ({s.spread()})  mean {s.mean:.3f}  "
            f"ratio {s.median / bare.median:.2f} / {s.mean / bare.mean:.2f}{gap}"
        )
    print(
        f"GUI heartbeat (10 ms) while the runtime thread runs Python for {BUSY_SECONDS} s, "
        f"{BUSY_ROUNDS} rounds: longest gap median (each round), runtime work rate"
    )
    for (chunk, switch), row in f["busy"].items():
        rounds = " ".join(f"{gap:.0f}" for gap in row["max"])
        print(
            f"  {chunk * 1e3:g} ms chunks, switch interval {switch * 1e3:g} ms: "
            f"{statistics.median(row['max']):6.1f} ms ({rounds}), "
            f"{statistics.median(row['rate']) / 1000:.0f}k it/s"
        )
    main_ms = f["bare_main_ms"]
    print(f"  (cross-check: bare SDK on asyncio.run in the main thread, mean {main_ms:.3f})")


def test_gui_stall_probe() -> None:
    figures = run()
    report(figures)
    assert figures["big_ok"]
    # A loose guard only (2 shared cores): the printed figures are the result.
    gaps = [figures["connect_gap_ms"]] + [s.gap_ms for s in figures["series"].values()]
    assert max(gaps) < 1000


if __name__ == "__main__":
    report(run())
