"""Per-call overhead: Registry.call vs a bare ``mcp.Client.call_tool``, same stdio server.

Both sides talk to the toolbox test server over stdio in the same run, alternating call
by call (500 each). Printed: medians and the ratio (target <= 1.15).
Run: ``python -m pytest tests/benchmarks/test_bench_calls.py -s`` or as a script.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from portico.config.model import Config, Dialect, Scope, ServerSpec, Source, Transport

REPO = Path(__file__).resolve().parents[2]
TOOLBOX = REPO / "tests" / "servers" / "toolbox.py"
CALLS = 500


async def bench(calls: int = CALLS) -> dict[str, float]:
    from mcp import Client, StdioServerParameters

    from portico.runtime.hub import Hub

    spec = ServerSpec(
        name="tb",
        source=Source(Path("/bench/mcp.toml"), 1, Scope.GLOBAL, Dialect.TOML),
        transport=Transport.STDIO,
        command=sys.executable,
        args=(str(TOOLBOX), "stdio"),
    )
    bare_times: list[float] = []
    ours_times: list[float] = []
    conn_times: list[float] = []
    params = StdioServerParameters(command=sys.executable, args=[str(TOOLBOX), "stdio"])
    async with Client(params) as client, Hub() as hub:
        await hub.apply(Config(servers=(spec,)))
        registry = hub.registry
        conn = hub.connection("tb")
        mode = f"bare {client.protocol_version}, ours {hub.connection('tb').protocol_version}"
        for _ in range(10):  # warm up both paths
            await client.call_tool("echo", {"text": "x"})
            await registry.call("tb__echo", {"text": "x"})
        # Alternate call by call so drifting machine load hits both sides alike.
        for _ in range(calls):
            started = time.perf_counter()
            await client.call_tool("echo", {"text": "hello"})
            bare_times.append(time.perf_counter() - started)
            started = time.perf_counter()
            await registry.call("tb__echo", {"text": "hello"})
            ours_times.append(time.perf_counter() - started)
            started = time.perf_counter()
            await conn.call_tool("echo", {"text": "hello"})
            conn_times.append(time.perf_counter() - started)
    bare, ours = statistics.median(bare_times), statistics.median(ours_times)
    direct = statistics.median(conn_times)
    figures = {
        "bare_ms": bare * 1000,
        "ours_ms": ours * 1000,
        "conn_ms": direct * 1000,
        "ratio": ours / bare,
        "registry_layer_ratio": ours / direct,
    }
    print(
        f"\n{calls} echo calls over stdio ({mode}): bare Client.call_tool median "
        f"{figures['bare_ms']:.2f} ms, Registry.call median {figures['ours_ms']:.2f} ms, "
        f"ratio {figures['ratio']:.3f} (target <= 1.15)\n"
        f"same server process: Connection.call_tool median {figures['conn_ms']:.2f} ms, "
        f"Registry.call / Connection.call_tool = {figures['registry_layer_ratio']:.3f} "
        "(the registry layer alone; bare and ours use two server processes, so their ratio "
        "also carries scheduling noise on a loaded machine)"
    )
    return figures


def test_call_overhead() -> None:
    with tempfile.TemporaryDirectory() as home:
        os.environ.setdefault("PORTICO_HOME", home)
        figures = asyncio.run(bench())
    assert figures["bare_ms"] > 0


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as home:
        os.environ.setdefault("PORTICO_HOME", home)
        asyncio.run(bench())
