"""GUI stall probe: a 10 ms QTimer heartbeat on the app's qasync loop while the runtime
thread connects 20 stdio servers, runs 1,000 tool calls, and receives a 10 MiB result.

Also prints the per-call cost of a tool call driven from the GUI loop through the facade
(RuntimeThread.submit -> Connection.call_tool) vs a bare SDK ``Client.call_tool`` on a
plain asyncio loop, against the same tiny stdio server.

Run: ``QT_QPA_PLATFORM=offscreen python -m pytest tests/benchmarks/test_bench_gui_stall.py -s``
(or as a script). Goals from the issue: longest gap < 100 ms (goal 50 ms); ratio <= 1.2.

Measured (2 shared cores, load ~5, PySide6 6.11.3, Python 3.11): connecting 20 servers
20-24 ms longest gap (127-336 ms before ui/session.py pre-imported the transports);
1,000 calls 15-20 ms; a 10 MiB result 50-74 ms (JSON + model validation on the runtime
thread hold the GIL). Per call: facade 1.7-2.9 ms vs bare SDK 0.9-1.2 ms vs
Connection.call_tool on the runtime loop 1.0-1.5 ms; the thread hop costs ~0.35 ms when
idle and more under load (GIL hand-offs), so the ratio swings 1.4-3x run to run.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

REPO = Path(__file__).resolve().parents[2]
TINY = REPO / "tests" / "servers" / "tiny.py"
SERVERS = 20
CALLS = 1000
BIG = 10 * 1024 * 1024


class Heartbeat:
    """Records the longest gap between 10 ms ticks of a QTimer on the GUI loop."""

    def __init__(self) -> None:
        from PySide6.QtCore import QTimer

        self.timer = QTimer()
        self.timer.setInterval(10)
        self.timer.timeout.connect(self._tick)
        self.last = time.perf_counter()
        self.gaps: list[float] = []

    def start(self) -> None:
        self.gaps.clear()
        self.last = time.perf_counter()
        self.timer.start()

    def stop(self) -> float:
        self.timer.stop()
        return max(self.gaps, default=0.0) * 1000

    def _tick(self) -> None:
        now = time.perf_counter()
        self.gaps.append(now - self.last)
        self.last = now


def _write_config(home: Path) -> None:
    config = home / "config"
    config.mkdir(parents=True, exist_ok=True)
    py, tiny = sys.executable.replace("\\", "/"), str(TINY).replace("\\", "/")
    body = "discovery_concurrency = 4\n\n" + "".join(
        f'[mcp.s{i}]\ncommand = ["{py}", "{tiny}", "--tools", "3", "--name", "s{i}"]\n\n'
        for i in range(SERVERS)
    )
    (config / "mcp.toml").write_text(body, encoding="utf-8")


async def _bare_sdk(calls: int) -> float:
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=[str(TINY)])
    async with Client(params, mode="legacy") as client:
        await client.call_tool("echo", {"text": "warm"})
        start = time.perf_counter()
        for _ in range(calls):
            await client.call_tool("echo", {"text": "hello"})
        return (time.perf_counter() - start) / calls * 1000


async def _through_app(figures: dict[str, Any]) -> None:
    from portico.ui.bridge import EventBridge
    from portico.ui.facade import RuntimeThread
    from portico.ui.prompter import QtPrompter
    from portico.ui.session import RuntimeSession

    beat = Heartbeat()
    runtime = RuntimeThread()
    runtime.start()
    try:
        session = await runtime.submit(RuntimeSession.create(QtPrompter(), EventBridge()))
        await runtime.submit(session.load(None))
        beat.start()
        start = time.perf_counter()
        figures["summary"] = await runtime.submit(session.apply())
        figures["connect_s"] = time.perf_counter() - start
        figures["connect_gap_ms"] = beat.stop()

        conn = session.hub.connection("s0")
        await runtime.submit(conn.call_tool("echo", {"text": "warm"}))
        beat.start()
        start = time.perf_counter()
        for _ in range(CALLS):
            await runtime.submit(conn.call_tool("echo", {"text": "hello"}))
        figures["facade_call_ms"] = (time.perf_counter() - start) / CALLS * 1000
        figures["calls_gap_ms"] = beat.stop()

        async def batch() -> float:
            t0 = time.perf_counter()
            for _ in range(CALLS):
                await conn.call_tool("echo", {"text": "hello"})
            return (time.perf_counter() - t0) / CALLS * 1000

        figures["runtime_call_ms"] = await runtime.submit(batch())

        beat.start()
        start = time.perf_counter()
        result = await runtime.submit(conn.call_tool("echo", {"text": "x" * BIG}))
        figures["big_s"] = time.perf_counter() - start
        figures["big_gap_ms"] = beat.stop()
        figures["big_ok"] = len(result.content[0].text) == BIG
        await runtime.shutdown(session.close)
    finally:
        runtime.stop()


def run() -> dict[str, Any]:
    from portico.ui.loop import PorticoEventLoop, ensure_application

    with tempfile.TemporaryDirectory() as home:
        os.environ["PORTICO_HOME"] = home
        _write_config(Path(home))
        app = ensure_application()
        app.setQuitOnLastWindowClosed(False)
        figures: dict[str, Any] = {}
        with asyncio.Runner(loop_factory=lambda: PorticoEventLoop(app)) as runner:
            runner.run(_through_app(figures))
        bare = [asyncio.run(_bare_sdk(CALLS // 2)) for _ in range(2)]
        figures["bare_call_ms"] = statistics.median(bare)
        figures["ratio"] = figures["facade_call_ms"] / figures["bare_call_ms"]
    return figures


def report(f: dict[str, Any]) -> None:
    print(f"\n{SERVERS} servers connected in {f['connect_s']:.1f} s: {f['summary']}")
    print(f"longest GUI gap while connecting:      {f['connect_gap_ms']:6.1f} ms")
    print(f"longest GUI gap during {CALLS} calls:    {f['calls_gap_ms']:6.1f} ms")
    print(f"longest GUI gap for a 10 MiB result:   {f['big_gap_ms']:6.1f} ms ({f['big_s']:.1f} s)")
    print(
        f"per call: facade from the GUI loop {f['facade_call_ms']:.2f} ms, bare SDK on asyncio "
        f"{f['bare_call_ms']:.2f} ms, ratio {f['ratio']:.2f} (goal <= 1.2)"
    )
    print(
        f"          Connection.call_tool on the runtime loop itself {f['runtime_call_ms']:.2f} ms "
        f"(ratio {f['runtime_call_ms'] / f['bare_call_ms']:.2f})"
    )


def test_gui_stall_probe() -> None:
    figures = run()
    report(figures)
    assert figures["big_ok"]
    # A loose guard only (2 shared cores): the printed figures are the result.
    assert max(figures["connect_gap_ms"], figures["calls_gap_ms"]) < 1000


if __name__ == "__main__":
    report(run())
