"""Gateway call overhead, like for like: an HTTP backend called directly vs through the
endpoint, by the same client over the same transport (prints figures).

Run: .venv/bin/python tests/benchmarks/bench_gateway_http.py [rounds] [calls] [--against DIR]

The backend is the SDK test server ``toolbox`` served over Streamable HTTP (the SDK's
``streamable-http`` run: uvicorn on 127.0.0.1). The MCP Python SDK's client calls it
  direct    client -> toolbox over Streamable HTTP
  gateway   client -> ``portico serve`` over Streamable HTTP -> the same toolbox, the
            endpoint's connection being an HTTP one too
with each protocol revision (2026-07-28 and 2025-11-25, the client's ``mode``), for
``echo`` and for a tool that takes 20 ms (``sleep``). Each round runs direct and gateway
back to back (alternating which goes first), ``calls`` calls each; the figures are the
median over rounds of each round's median call, the ratio gateway / direct, and the CPU
per call of each process on the path (client, endpoint, backend), which swings much
less than wall time on a loaded machine. Goal (issue 27): gateway <= 1.10x direct.
``--against DIR`` adds a third leg, ``before``: a second ``portico serve`` run from another
checkout's ``desktop`` folder (e.g. ``git archive HEAD desktop | tar -x -C DIR``) in front
of the same backend, so a change is measured against the code before it in the same run.

bench_cli_via_gateway.py --overhead-only measures the other comparison: a client that
would otherwise spawn the backend over stdio, against the same client calling through
the endpoint over HTTP (so it includes the client's own HTTP transport cost).
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_cli_via_gateway import ENV, TOOLBOX, _children, _cpu_seconds, serve, stop

CASES: tuple[tuple[str, dict[str, object]], ...] = (
    ("echo", {"text": "hi"}),
    ("sleep", {"seconds": 0.02}),
)
MODES = (("auto", "2026-07-28"), ("legacy", "2025-11-25"))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def backend() -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, str(TOOLBOX), "http", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=ENV,
    )
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if time.monotonic() > deadline or proc.poll() is not None:
                raise SystemExit("toolbox http did not start") from None
            time.sleep(0.1)
    return proc, f"http://127.0.0.1:{port}/mcp"


def home(url: str) -> Path:
    root = Path(tempfile.mkdtemp(prefix="portico-bench-"))
    (root / "config").mkdir(parents=True)
    (root / "config" / "mcp.toml").write_text(
        f'defer_tools = 1000\n[mcp.tb]\nurl = "{url}"\ntrust = "full"\n'
    )
    return root


async def calls_over_http(
    url: str,
    token: str | None,
    mode: str,
    revision: str,
    tool: str,
    args: dict[str, object],
    calls: int,
    pids: dict[str, int],
) -> tuple[float, dict[str, float]]:
    """Median wall time of a call, and CPU ms per call of each named process."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        Client(streamable_http_client(url, http_client=http), mode=mode) as client,
    ):
        if client.protocol_version != revision:
            raise SystemExit(f"{url}: negotiated {client.protocol_version}, not {revision}")
        await client.call_tool(tool, args)  # warm: imports, the first list
        before = {"client": time.process_time()}
        before |= {name: _cpu_seconds(pid) for name, pid in pids.items()}
        times = []
        for _ in range(calls):
            began = time.perf_counter()
            result = await client.call_tool(tool, args)
            times.append(time.perf_counter() - began)
            if result.is_error:
                raise SystemExit(f"{tool} failed: {result}")
        after = {"client": time.process_time()}
        after |= {name: _cpu_seconds(pid) for name, pid in pids.items()}
    cpu = {name: (after[name] - before[name]) / calls * 1000 for name in before}
    return statistics.median(times), cpu


def summed(rows: list[dict[str, float]]) -> dict[str, float]:
    return {name: statistics.median(row[name] for row in rows) for name in rows[0]}


def endpoint(backend_url: str, desktop: str) -> tuple[subprocess.Popen[str], str, str]:
    """``portico serve`` (from the ``desktop`` folder given) fronting the backend: the
    process, its URL and the CLI's token."""
    env = {**ENV, "PORTICO_HOME": str(home(backend_url)), "PYTHONPATH": desktop}
    proc, url = serve(env)
    state = Path(env["PORTICO_HOME"]) / "state" / "endpoint.json"
    token = json.loads(state.read_text())["token"]
    if _children(proc.pid):
        raise SystemExit("portico serve spawned a process: the backend should be HTTP only")
    return proc, url, token


async def measure(rounds: int, calls: int, against: str | None) -> None:
    back, backend_url = backend()
    gateways = [("gateway", *endpoint(backend_url, ENV["PYTHONPATH"]))]
    if against is not None:
        gateways.append(("before", *endpoint(backend_url, str(Path(against) / "desktop"))))
    wall: dict[tuple[str, str, str], list[float]] = {}
    cpu: dict[tuple[str, str, str], list[dict[str, float]]] = {}
    try:
        for round_ in range(rounds):
            for mode, revision in MODES:
                for tool, args in CASES:
                    legs: list[tuple[str, str, str | None, str, dict[str, int]]] = [
                        ("direct", backend_url, None, tool, {"backend": back.pid})
                    ]
                    legs += [
                        (
                            leg,
                            url,
                            token,
                            f"tb__{tool}",
                            {"endpoint": proc.pid, "backend": back.pid},
                        )
                        for leg, proc, url, token in gateways
                    ]
                    shift = round_ % len(legs)  # each leg goes first in turn
                    legs = legs[shift:] + legs[:shift]
                    for leg, target, bearer, name, pids in legs:
                        median, spent = await calls_over_http(
                            target, bearer, mode, revision, name, args, calls, pids
                        )
                        wall.setdefault((revision, tool, leg), []).append(median)
                        cpu.setdefault((revision, tool, leg), []).append(spent)
    finally:
        for _leg, proc, _url, _token in gateways:
            stop(proc)
        back.terminate()
        back.wait(30)
    print(
        f"gateway overhead against an HTTP backend ({rounds} alternating rounds of "
        f"{calls} calls; median of the rounds' median call):"
    )
    for _mode, revision in MODES:
        for tool, _args in CASES:
            d = statistics.median(wall[(revision, tool, "direct")])
            dc = summed(cpu[(revision, tool, "direct")])
            print(
                f"  {revision} {tool:5}  direct {d * 1000:6.2f} ms  CPU ms/call "
                + ", ".join(f"{k} {v:.2f}" for k, v in dc.items())
                + f" = {sum(dc.values()):.2f}"
            )
            for leg, *_rest in gateways:
                g = statistics.median(wall[(revision, tool, leg)])
                ratios = [
                    g_ / d_
                    for g_, d_ in zip(
                        wall[(revision, tool, leg)], wall[(revision, tool, "direct")], strict=True
                    )
                ]
                gc = summed(cpu[(revision, tool, leg)])
                print(
                    f"    {leg:8} {g * 1000:6.2f} ms  {g / d:.2f}x (goal <= 1.10x; per round "
                    f"{min(ratios):.2f}-{max(ratios):.2f}x)  +{(g - d) * 1000:.2f} ms;  CPU "
                    + ", ".join(f"{k} {v:.2f}" for k, v in gc.items())
                    + f" = {sum(gc.values()):.2f}"
                )


def main() -> None:
    numbers = [int(a) for a in sys.argv[1:] if a.isdigit()]
    rounds = numbers[0] if numbers else 4
    calls = numbers[1] if len(numbers) > 1 else 100
    against = sys.argv[sys.argv.index("--against") + 1] if "--against" in sys.argv else None
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    asyncio.run(measure(rounds, calls, against))
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
