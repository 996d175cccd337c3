"""The CLI and other clients through the local endpoint, measured (prints figures).

Run: .venv/bin/python tests/benchmarks/bench_cli_via_gateway.py [runs] [calls]

1. One-shot ``portico mcp call tb echo`` (a fresh process each time, the SDK test server
   ``toolbox`` over stdio), median of ``runs``:
     direct     ``--direct``: the command starts the server, calls, stops it
     gateway    the same command answered by a running ``portico serve``
     inspector  the MCP Inspector CLI on the same server (if tests/peers has it)
   Goal (issue 27): gateway <= 0.2x inspector.
2. Call overhead: the MCP Python SDK's client calling ``echo`` ``calls`` times, median per
   call, against the backend directly (the client spawns toolbox over stdio) and through
   ``portico serve`` (client -> endpoint -> hub -> the same server over stdio); and the
   same for a tool that takes 20 ms (``sleep``). Goal: gateway <= 1.10x direct.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TOOLBOX = REPO / "tests" / "servers" / "toolbox.py"
PEERS = REPO / "tests" / "peers" / "node_modules"
NODE = PEERS / ".bin" / "node"
INSPECTOR = PEERS / "@modelcontextprotocol" / "inspector-cli" / "build" / "cli.js"
ENV = {**os.environ, "PYTHONPATH": str(REPO / "desktop")}


def home() -> Path:
    root = Path(tempfile.mkdtemp(prefix="portico-bench-"))
    config = root / "config"
    config.mkdir(parents=True)
    command = json.dumps([sys.executable, str(TOOLBOX), "stdio"])
    (config / "mcp.toml").write_text(
        f'defer_tools = 1000\n[mcp.tb]\ncommand = {command}\ntrust = "full"\n'
    )
    return root


def timed(argv: list[str], env: dict[str, str], expect: str) -> float:
    began = time.perf_counter()
    out = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120, check=False)
    elapsed = time.perf_counter() - began
    if out.returncode != 0 or expect not in out.stdout + out.stderr:
        raise SystemExit(f"{argv[:4]}... failed: {out.stdout}{out.stderr}")
    return elapsed


def median_of(runs: int, argv: list[str], env: dict[str, str], expect: str) -> float:
    timed(argv, env, expect)  # warm the file cache
    return statistics.median(timed(argv, env, expect) for _ in range(runs))


def serve(env: dict[str, str]) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "portico.cli.main", "serve", "--no-socket"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    url = proc.stdout.readline().strip().removeprefix("Portico endpoint: ")
    summary = proc.stdout.readline()
    if summary.startswith("socket: "):  # the Unix socket's line comes before the summary
        summary = proc.stdout.readline()
    if not summary.startswith("MCP: registered"):
        raise SystemExit(f"portico serve did not start: {url} {summary}")
    return proc, url


def stop(proc: subprocess.Popen[str]) -> None:
    proc.terminate()
    proc.wait(30)
    if proc.stdout is not None:
        proc.stdout.close()


def one_shot(runs: int, env: dict[str, str]) -> None:
    call = [sys.executable, "-m", "portico.cli.main", "mcp", "call", "tb", "echo"]
    call += ["--args", '{"text": "hi"}']
    direct = median_of(runs, [*call, "--direct"], env, "echo: hi")
    proc, _url = serve(env)
    try:
        gateway = median_of(runs, [*call, "-v"], env, "via the running Portico")
    finally:
        stop(proc)
    print(f"one-shot portico mcp call (median of {runs}):")
    print(f"  direct    {direct * 1000:7.0f} ms")
    print(f"  gateway   {gateway * 1000:7.0f} ms   {gateway / direct:.2f}x direct")
    if NODE.exists() and INSPECTOR.exists():
        argv = [str(NODE), str(INSPECTOR), "--cli", sys.executable, str(TOOLBOX), "stdio"]
        argv += ["--method", "tools/call", "--tool-name", "echo", "--tool-arg", "text=hi"]
        inspector = median_of(runs, argv, env, "echo: hi")
        print(f"  inspector {inspector * 1000:7.0f} ms")
        print(
            f"  gateway / inspector = {gateway / inspector:.2f}x (goal <= 0.20x); "
            f"direct / inspector = {direct / inspector:.2f}x"
        )
    else:
        print("  inspector: not installed in tests/peers (npm install in tests/peers)")


async def per_call(client: object, tool: str, args: dict[str, object], calls: int) -> float:
    times = []
    for _ in range(calls):
        began = time.perf_counter()
        result = await client.call_tool(tool, args)  # type: ignore[attr-defined]
        times.append(time.perf_counter() - began)
        if result.is_error:
            raise SystemExit(f"{tool} failed: {result}")
    return statistics.median(times)


async def overhead(calls: int, env: dict[str, str]) -> None:
    import httpx2
    from mcp import Client, StdioServerParameters
    from mcp.client.streamable_http import streamable_http_client

    cases = (("echo", {"text": "hi"}), ("sleep", {"seconds": 0.02}))
    params = StdioServerParameters(command=sys.executable, args=[str(TOOLBOX), "stdio"])
    direct: dict[str, float] = {}
    async with Client(params) as client:
        for tool, args in cases:
            direct[tool] = await per_call(client, tool, args, calls)
    proc, url = serve(env)
    token = json.loads((Path(env["PORTICO_HOME"]) / "state" / "endpoint.json").read_text())["token"]
    gateway: dict[str, float] = {}
    try:
        headers = {"Authorization": f"Bearer {token}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=60) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            for tool, args in cases:
                gateway[tool] = await per_call(client, f"tb__{tool}", args, calls)
    finally:
        stop(proc)
    print(f"call overhead (median of {calls} calls, the SDK client):")
    for tool, _args in cases:
        d, g = direct[tool], gateway[tool]
        print(
            f"  {tool:6} direct {d * 1000:6.2f} ms   gateway {g * 1000:6.2f} ms   "
            f"{g / d:.2f}x (goal <= 1.10x)   +{(g - d) * 1000:.2f} ms"
        )


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    calls = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    env = {**ENV, "PORTICO_HOME": str(home())}
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    one_shot(runs, env)
    asyncio.run(overhead(calls, env))


if __name__ == "__main__":
    main()
