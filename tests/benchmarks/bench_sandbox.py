"""Sandboxed stdio servers against the same servers unsandboxed, measured in one run.

Run: PYTHONPATH=desktop .venv/bin/python tests/benchmarks/bench_sandbox.py [rounds] [calls]

For each server (server-everything on node, the SDK toolbox on Python, the standard-
library tiny server) the two launches alternate, ``rounds`` times each: connect is the
time from Connection.start() to Running (spawn, the MCP handshake and the first lists);
calls is the median of ``calls`` echo calls on the live connection. Printed: medians and
the ratios sandboxed / unsandboxed (goals: connect <= 1.2x, a call <= 1.02x).

A call takes a fraction of a millisecond, so two processes started apart differ by more
than the sandbox costs. The paired figure therefore keeps one sandboxed and one
unsandboxed connection live at once and alternates their calls (which goes first
alternates too), so the machine's load falls on both alike.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from portico.config.model import (
    Dialect,
    Protocol,
    SandboxSpec,
    Scope,
    ServerSpec,
    Source,
    Transport,
)
from portico.runtime.connection import Connection
from portico.runtime.events import EventBus, Status

REPO = Path(__file__).resolve().parents[2]
SERVERS = REPO / "tests" / "servers"
EVERYTHING = REPO / "tests/peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js"


def spec(name: str, command: str, args: list[str], sandboxed: bool) -> ServerSpec:
    source = Source(Path("/bench/mcp.toml"), 1, Scope.GLOBAL, Dialect.TOML)
    return ServerSpec(
        name=name,
        source=source,
        transport=Transport.STDIO,
        command=command,
        args=tuple(args),
        protocol=Protocol.LEGACY,
        connect_timeout=60.0,
        sandbox=SandboxSpec(enabled=sandboxed),
    )


async def one(
    server: ServerSpec, tool: str, arguments: dict[str, str], calls: int
) -> tuple[float, float]:
    conn = Connection(server, bus=EventBus())
    started = time.perf_counter()
    await conn.start()
    try:
        state = await conn.wait_settled(60)
        connect = time.perf_counter() - started
        assert state.status is Status.RUNNING, state.error
        times = []
        for _ in range(calls):
            t0 = time.perf_counter()
            await conn.call_tool(tool, arguments)
            times.append(time.perf_counter() - t0)
        return connect, statistics.median(times)
    finally:
        await conn.stop()


async def paired(
    command: str, args: list[str], tool: str, arguments: dict[str, str], calls: int
) -> tuple[float, float]:
    conns = {
        flag: Connection(spec("p", command, args, flag), bus=EventBus()) for flag in (False, True)
    }
    for conn in conns.values():
        await conn.start()
    try:
        for conn in conns.values():
            state = await conn.wait_settled(60)
            assert state.status is Status.RUNNING, state.error
        times: dict[bool, list[float]] = {False: [], True: []}
        for i in range(calls):
            order = (False, True) if i % 2 else (True, False)
            for flag in order:
                t0 = time.perf_counter()
                await conns[flag].call_tool(tool, arguments)
                times[flag].append(time.perf_counter() - t0)
        return statistics.median(times[False]), statistics.median(times[True])
    finally:
        for conn in conns.values():
            await conn.stop()


async def main(rounds: int, calls: int) -> None:
    import shutil

    node = shutil.which("node")
    subjects = []
    if node and EVERYTHING.exists():
        subjects.append(
            ("everything (node)", node, [str(EVERYTHING), "stdio"], "echo", {"message": "hi"})
        )
    subjects.append(
        (
            "toolbox (python sdk)",
            sys.executable,
            [str(SERVERS / "toolbox.py"), "stdio"],
            "echo",
            {"text": "hi"},
        )
    )
    subjects.append(
        ("tiny (python stdlib)", sys.executable, [str(SERVERS / "tiny.py")], "echo", {"text": "hi"})
    )
    print(f"{rounds} rounds each, {calls} calls per connection; medians")
    print("goals: connect ratio <= 1.2, call ratio <= 1.02")
    print(
        f"{'server':24} {'connect off':>12} {'connect on':>11} {'ratio':>6}"
        f"   {'call off':>9} {'call on':>9} {'ratio':>6}"
    )
    for label, command, args, tool, arguments in subjects:
        got: dict[bool, list[tuple[float, float]]] = {False: [], True: []}
        await one(spec("warm", command, args, True), tool, arguments, 1)  # caches, probe
        for _ in range(rounds):
            for sandboxed in (False, True):
                got[sandboxed].append(
                    await one(spec("b", command, args, sandboxed), tool, arguments, calls)
                )
        c_off = statistics.median(c for c, _ in got[False])
        c_on = statistics.median(c for c, _ in got[True])
        k_off = statistics.median(k for _, k in got[False])
        k_on = statistics.median(k for _, k in got[True])
        print(
            f"{label:24} {c_off * 1000:10.0f}ms {c_on * 1000:9.0f}ms {c_on / c_off:6.2f}"
            f"   {k_off * 1000:7.2f}ms {k_on * 1000:7.2f}ms {k_on / k_off:6.2f}"
        )
        p_off, p_on = await paired(command, args, tool, arguments, calls * rounds)
        print(
            f"{'  calls paired':24} {'':12} {'':11} {'':6}"
            f"   {p_off * 1000:7.2f}ms {p_on * 1000:7.2f}ms {p_on / p_off:6.2f}"
        )


if __name__ == "__main__":
    import os

    os.environ.setdefault("PORTICO_HOME", tempfile.mkdtemp(prefix="bench-sandbox-"))
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    calls = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    asyncio.run(main(rounds, calls))
