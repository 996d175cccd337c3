"""Connecting 20 stdio servers: Hub.apply (discovery_concurrency 4) vs the bare SDK.

Bare: ``async with Client(...)`` + ``list_tools`` per server under an asyncio.Semaphore
of 4 (asyncio.gather), and one by one (a semaphore of 1). The time counted is until every
server is connected and listed; closing is not counted. Printed: wall times and the
ratios (targets: hub / bare-4 <= 1.10; hub / one-by-one near 0.5 on 2 cores).
Run: ``python -m pytest tests/benchmarks/test_bench_connect.py -s`` or as a script
(``--tiny`` uses the standard-library server instead of the SDK toolbox).
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path

from portico.config.model import (
    Config,
    Dialect,
    RuntimeSettings,
    Scope,
    ServerSpec,
    Source,
    Transport,
)

REPO = Path(__file__).resolve().parents[2]
TOOLBOX = REPO / "tests" / "servers" / "toolbox.py"
TINY = REPO / "tests" / "servers" / "tiny.py"
SERVERS = 20


def server_args(tiny: bool, i: int) -> list[str]:
    return [str(TINY), "--name", f"s{i}"] if tiny else [str(TOOLBOX), "stdio", "--name", f"s{i}"]


async def bare(n: int, limit: int, tiny: bool) -> float:
    from mcp import Client, StdioServerParameters

    slots = asyncio.Semaphore(limit)
    done = asyncio.Event()
    ready = 0
    all_ready = asyncio.Event()

    async def one(i: int) -> None:
        nonlocal ready
        params = StdioServerParameters(command=sys.executable, args=server_args(tiny, i))
        async with AsyncExitStack() as stack:
            async with slots:
                client = await stack.enter_async_context(Client(params))
                await client.list_tools()
            ready += 1
            if ready == n:
                all_ready.set()
            await done.wait()

    started = time.perf_counter()
    tasks = [asyncio.create_task(one(i)) for i in range(n)]
    await all_ready.wait()
    elapsed = time.perf_counter() - started
    done.set()
    await asyncio.gather(*tasks)
    return elapsed


async def hub_connect(n: int, limit: int, tiny: bool) -> float:
    from portico.runtime.events import Status
    from portico.runtime.hub import Hub

    specs = tuple(
        ServerSpec(
            name=f"s{i}",
            source=Source(Path("/bench/mcp.toml"), 1, Scope.GLOBAL, Dialect.TOML),
            transport=Transport.STDIO,
            command=sys.executable,
            args=tuple(server_args(tiny, i)),
        )
        for i in range(n)
    )
    async with Hub() as hub:
        started = time.perf_counter()
        line = await hub.apply(
            Config(servers=specs, settings=RuntimeSettings(discovery_concurrency=limit))
        )
        elapsed = time.perf_counter() - started
        running = sum(c.state.status is Status.RUNNING for c in hub.connections.values())
        assert running == n, line
    return elapsed


async def bench(n: int = SERVERS, tiny: bool = False) -> dict[str, float]:
    # Warm both paths: OS caches, imports, and the hub's one-time login-shell PATH lookup
    # (cached per process; printed separately as the cold start).
    await bare(2, 2, tiny)
    cold = await hub_connect(2, 2, tiny)
    ours = await hub_connect(n, 4, tiny)
    bare4 = await bare(n, 4, tiny)
    serial = await bare(n, 1, tiny)
    figures = {"hub_s": ours, "bare4_s": bare4, "serial_s": serial, "cold2_s": cold}
    kind = "tiny stdlib" if tiny else "SDK toolbox"
    print(
        f"\nconnecting {n} {kind} stdio servers: hub (concurrency 4) {ours:.2f} s, "
        f"bare gather under Semaphore(4) {bare4:.2f} s, one by one {serial:.2f} s\n"
        f"ratio hub / bare-4 = {ours / bare4:.3f} (target <= 1.10); "
        f"hub / one-by-one = {ours / serial:.3f}; (cold first hub pass of 2 servers, "
        f"incl. the login-shell PATH lookup: {cold:.2f} s)"
    )
    return figures


def test_connect_20() -> None:
    with tempfile.TemporaryDirectory() as home:
        os.environ.setdefault("PORTICO_HOME", home)
        figures = asyncio.run(bench())
    assert figures["hub_s"] > 0


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as home:
        os.environ.setdefault("PORTICO_HOME", home)
        asyncio.run(bench(tiny="--tiny" in sys.argv))
