"""The CLI and other clients through the local endpoint, measured (prints figures).

Run: .venv/bin/python tests/benchmarks/bench_cli_via_gateway.py [runs] [calls] [--overhead-only]

1. One-shot ``portico mcp call tb echo`` (a fresh process each time, the SDK test server
   ``toolbox`` over stdio), median of ``runs``:
     direct     ``--direct``: the command starts the server, calls, stops it
     gateway    the same command answered by a running ``portico serve``
     inspector  the MCP Inspector CLI on the same server (if tests/peers has it)
   Goal (issue 27): gateway <= 0.2x inspector.
2. Call overhead: the MCP Python SDK's client calling ``echo`` ``calls`` times, median per
   call, against the backend directly (the client spawns toolbox over stdio) and through
   ``portico serve`` (client -> endpoint -> hub -> the same server over stdio); and the
   same for a tool that takes 20 ms (``sleep``). Goal: gateway <= 1.10x direct. And the
   floor of that goal, the extra HTTP hop alone (tests/benchmarks/hop_floor.py): the
   same client calling an echo answered at once by a bare ASGI app, and by the SDK's
   server stack, each served by uvicorn as the endpoint is.
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


CPU: dict[str, float] = {}  # label -> CPU ms per call of every process on the path


def _cpu_seconds(pid: int) -> float:
    """utime + stime of a process (Linux /proc; 0 elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _children(pid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir() if Path("/proc").is_dir() else ():
        if entry.name.isdigit():
            try:
                if (entry / "stat").read_text().rsplit(")", 1)[1].split()[1] == str(pid):
                    out.append(int(entry.name))
            except OSError:
                continue
    return out


async def per_call(
    client: object,
    tool: str,
    args: dict[str, object],
    calls: int,
    label: str = "",
    pids: tuple[int, ...] = (),
) -> float:
    """Median wall time of a call; the CPU every process on the path spent per call (wall
    times swing with the machine's load, CPU much less) goes to CPU[label]."""
    watched = (*pids, *_children(os.getpid()))  # a stdio backend the client spawned
    before = time.process_time(), [_cpu_seconds(p) for p in watched]
    times = []
    for _ in range(calls):
        began = time.perf_counter()
        result = await client.call_tool(tool, args)  # type: ignore[attr-defined]
        times.append(time.perf_counter() - began)
        if result.is_error:
            raise SystemExit(f"{tool} failed: {result}")
    if label:
        spent = time.process_time() - before[0]
        spent += sum(_cpu_seconds(p) - b for p, b in zip(watched, before[1], strict=True))
        CPU[label] = spent / calls * 1000
    return statistics.median(times)


def floor_server(kind: str) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, str(Path(__file__).with_name("hop_floor.py")), kind],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=ENV,
    )
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


async def over_http(
    url: str,
    token: str | None,
    tool: str,
    args: dict[str, object],
    calls: int,
    label: str,
    server: subprocess.Popen[str],
) -> float:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        await client.call_tool(tool, args)  # warm: imports, the first list
        pids = (server.pid, *_children(server.pid))  # and the endpoint's backend
        return await per_call(client, tool, args, calls, label, pids)


async def overhead(calls: int, env: dict[str, str]) -> None:
    from mcp import Client, StdioServerParameters

    cases = (("echo", {"text": "hi"}), ("sleep", {"seconds": 0.02}))
    params = StdioServerParameters(command=sys.executable, args=[str(TOOLBOX), "stdio"])
    direct: dict[str, float] = {}
    async with Client(params) as client:
        for tool, args in cases:
            await client.call_tool(tool, args)
            direct[tool] = await per_call(client, tool, args, calls, f"direct {tool}")
    # The floor: the extra HTTP hop alone (an echo answered at once, nothing behind it).
    floor: dict[str, float] = {}
    for kind in ("raw", "sdk"):
        proc, url = floor_server(kind)
        try:
            floor[kind] = await over_http(
                url, None, "echo", {"text": "hi"}, calls, f"hop {kind}", proc
            )
        finally:
            proc.terminate()
            proc.wait(30)
    proc, url = serve(env)
    token = json.loads((Path(env["PORTICO_HOME"]) / "state" / "endpoint.json").read_text())["token"]
    gateway: dict[str, float] = {}
    try:
        for tool, args in cases:
            gateway[tool] = await over_http(
                url, token, f"tb__{tool}", args, calls, f"gateway {tool}", proc
            )
    finally:
        stop(proc)
    print(f"call overhead (median of {calls} calls, the SDK client at 2026-07-28):")
    print(
        f"  the hop alone: a bare ASGI echo {floor['raw'] * 1000:.2f} ms, "
        f"the SDK's server stack echoing {floor['sdk'] * 1000:.2f} ms"
    )
    for tool, _args in cases:
        d, g = direct[tool], gateway[tool]
        best = (d + floor["raw"]) / d
        print(
            f"  {tool:6} direct {d * 1000:6.2f} ms   gateway {g * 1000:6.2f} ms   "
            f"{g / d:.2f}x (goal <= 1.10x)   +{(g - d) * 1000:.2f} ms; "
            f"floor direct + bare hop {best:.2f}x, direct + SDK hop "
            f"{(d + floor['sdk']) / d:.2f}x; gateway's own "
            f"+{(g - d - floor['sdk']) * 1000:.2f} ms beyond the SDK hop"
        )
    print("  CPU per call, all processes on the path (client, endpoint, backend):")
    for label, ms in CPU.items():
        print(f"    {label:12} {ms:6.2f} ms")
    for tool, _args in cases:
        d, g = CPU[f"direct {tool}"], CPU[f"gateway {tool}"]
        print(
            f"  {tool}: the gateway path costs +{g - d:.2f} ms CPU; the SDK hop alone "
            f"+{CPU['hop sdk']:.2f} ms, a bare hop +{CPU['hop raw']:.2f} ms"
        )


def main() -> None:
    numbers = [a for a in sys.argv[1:] if a.isdigit()]
    runs = int(numbers[0]) if numbers else 5
    calls = int(numbers[1]) if len(numbers) > 1 else 200
    env = {**ENV, "PORTICO_HOME": str(home())}
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    if "--overhead-only" not in sys.argv:
        one_shot(runs, env)
    asyncio.run(overhead(calls, env))


if __name__ == "__main__":
    main()
