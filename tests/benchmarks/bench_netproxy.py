"""A sandboxed server's HTTP through bridge + proxy vs direct, measured in one run.

Run: PYTHONPATH=desktop .venv/bin/python tests/benchmarks/bench_netproxy.py [requests]

A client process makes N requests to a loopback HTTP target, four ways:
  direct, new connection each   what an unsandboxed server does for plain HTTP
  proxy,  new connection each   absolute-form GET via 127.0.0.1:port -> bridge -> proxy
  direct, one keep-alive conn   what an HTTPS client does once its connection is up
  tunnel, one keep-alive conn   CONNECT through bridge + proxy, then the same requests
then 8 MiB downloaded direct and through a tunnel, and the bridge's own start-up cost
(`python -I -S bridge.py -- /bin/true` against `/bin/true` and `python -I -S -c pass`,
interleaved). The proxy and the target run on this process's loop; the bridge runs as
a plain child (bwrap adds no cost on loopback: the namespace only hides the network).
"""

from __future__ import annotations

import asyncio
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from portico.runtime.sandbox.bridge import BRIDGE_SCRIPT, bridge_prefix
from portico.runtime.sandbox.netproxy import HostFilter, start_proxy

BIG = 8 * 1024 * 1024

CLIENT = r"""
import socket, sys, time
mode, host, port, n, via = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
via_port = int(via) if via != "-" else None
def read_answer(sock, pending=b""):
    while b"\r\n\r\n" not in pending:
        pending += sock.recv(65536)
    head, body = pending.split(b"\r\n\r\n", 1)
    length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
    while len(body) < length:
        body += sock.recv(1 << 20)
    return body[:length], body[length:]
def connect():
    return socket.create_connection(("127.0.0.1", via_port) if via_port else (host, port))
start = time.perf_counter()
if mode == "fresh":
    for i in range(n):
        with connect() as sock:
            target = f"http://{host}:{port}/r{i}" if via_port else f"/r{i}"
            head = f"GET {target} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
            sock.sendall(head.encode())
            read_answer(sock)
else:
    sock = connect()
    if via_port:
        sock.sendall(f"CONNECT {host}:{port} HTTP/1.1\r\n\r\n".encode())
        assert sock.recv(1024).startswith(b"HTTP/1.1 200")
    rest = b""
    path = "/big" if mode == "big" else "/r"
    for i in range(n):
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
        _, rest = read_answer(sock, rest)
    sock.close()
print(time.perf_counter() - start)
"""


async def target_server(host: str) -> tuple[asyncio.Server, int]:
    big = b"x" * BIG

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                body = big if head.startswith(b"GET /big ") else b"ok"
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
                await writer.drain()
                if b"connection: close" in head.lower():
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(answer, host, 0)
    return server, server.sockets[0].getsockname()[1]


async def client(prefix: list[str], mode: str, port: int, n: int, via: str) -> float:
    proc = await asyncio.create_subprocess_exec(
        *prefix,
        sys.executable,
        "-I",
        "-S",
        "-c",
        CLIENT,
        mode,
        "127.0.0.2",
        str(port),
        str(n),
        via,
        stdout=asyncio.subprocess.PIPE,
    )
    out, _ = await proc.communicate()
    assert proc.returncode == 0, mode
    return float(out)


def startup(rounds: int) -> dict[str, tuple[float, float]]:
    """(median wall, mean CPU) per way; CPU is steadier than wall on a busy machine."""
    cases = {
        "/bin/true": ["/bin/true"],
        "python -I -S -c pass": [sys.executable, "-I", "-S", "-c", "pass"],
        "bridge -- /bin/true": [*bridge_prefix(sys.executable, "/nonexistent", 39871), "/bin/true"],
    }
    times: dict[str, list[float]] = {name: [] for name in cases}
    cpu = dict.fromkeys(cases, 0.0)
    for _ in range(rounds):
        for name, argv in cases.items():
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            began = time.perf_counter()
            subprocess.run(argv, check=True)
            times[name].append(time.perf_counter() - began)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu[name] += after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return {name: (statistics.median(times[name]), cpu[name] / rounds) for name in cases}


async def main(n: int) -> None:
    server, port = await target_server("127.0.0.2")
    with tempfile.TemporaryDirectory(prefix="np-bench-", dir="/tmp") as run:
        proxy = await start_proxy(
            Path(run) / "p.sock", HostFilter([f"127.0.0.2:{port}"]), lambda h, p: None
        )
        bridge_port = 39000 + os.getpid() % 1000
        bridged = bridge_prefix(sys.executable, str(proxy.socket_path), bridge_port)
        results = {}
        for _ in range(3):  # interleaved rounds; the best of each
            for name, prefix, mode, count, via in (
                ("direct, fresh", [], "fresh", n, "-"),
                ("proxy,  fresh", bridged, "fresh", n, str(bridge_port)),
                ("direct, keep-alive", [], "keep", n, "-"),
                ("tunnel, keep-alive", bridged, "keep", n, str(bridge_port)),
                ("direct, 8 MiB x4", [], "big", 4, "-"),
                ("tunnel, 8 MiB x4", bridged, "big", 4, str(bridge_port)),
            ):
                took = await client(prefix, mode, port, count, via)
                results[name] = min(results.get(name, took), took)
        await proxy.close()
    server.close()
    per = {name: took / (4 if "MiB" in name else n) for name, took in results.items()}
    print(f"{n} requests per way, best of 3 (client in its own process):")
    for name, took in per.items():
        unit = "ms/download" if "MiB" in name else "ms/request"
        print(f"  {name:22s} {took * 1000:8.3f} {unit}")
    print(
        f"  fresh connections: proxy / direct = {per['proxy,  fresh'] / per['direct, fresh']:.2f}x"
    )
    print(
        "  keep-alive:        tunnel / direct = "
        f"{per['tunnel, keep-alive'] / per['direct, keep-alive']:.2f}x"
    )
    print(
        f"  8 MiB download:    tunnel / direct = "
        f"{per['tunnel, 8 MiB x4'] / per['direct, 8 MiB x4']:.2f}x"
    )
    figures = startup(20)
    print(f"start-up, 20 interleaved runs ({BRIDGE_SCRIPT}):")
    for name, (wall, cpu) in figures.items():
        print(f"  {name:22s} {wall * 1000:8.1f} ms wall (median) {cpu * 1000:6.1f} ms CPU (mean)")
    wall = figures["bridge -- /bin/true"][0] - figures["/bin/true"][0]
    cpu = figures["bridge -- /bin/true"][1] - figures["/bin/true"][1]
    print(
        f"  the bridge adds {wall * 1000:.1f} ms wall, {cpu * 1000:.1f} ms CPU before the command"
    )


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 300))
