"""The in-sandbox bridge run for real: first as a plain process (relay, exit status,
signals), then inside bwrap with no network, where a process reaches a declared host only
through bridge + proxy, is refused an undeclared one, and cannot dial out directly."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import sys
from pathlib import Path

import pytest

from portico.runtime.sandbox.bridge import BRIDGE_SCRIPT, bridge_prefix, proxy_env
from portico.runtime.sandbox.bwrap import BwrapPlan
from portico.runtime.sandbox.netproxy import HostFilter, start_proxy
from tests.helpers.servers import NODE, free_port
from tests.runtime.sandbox.targets import http_target, need_bwrap, short_dir

FETCH = """
import sys, urllib.request, urllib.error
for url in sys.argv[1:]:
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            print(answer.status, answer.read().decode())
    except urllib.error.HTTPError as exc:
        print(exc.code, exc.read().decode().strip())
sys.exit(7)
"""


def test_proxy_env_and_prefix() -> None:
    env = proxy_env(3128)
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        assert env[name] == env[name.lower()] == "http://127.0.0.1:3128"
    assert env["NO_PROXY"] == env["no_proxy"] == "localhost,127.0.0.1,::1"
    prefix = bridge_prefix("/usr/bin/python3", "/run/p.sock", 3128)
    assert prefix == [
        "/usr/bin/python3",
        "-I",
        "-S",
        BRIDGE_SCRIPT,
        "--socket",
        "/run/p.sock",
        "--port",
        "3128",
        "--",
    ]
    assert Path(BRIDGE_SCRIPT).is_file()


async def test_bridge_relays_and_exits_with_the_commands_code() -> None:
    blocked: list[tuple[str, int]] = []
    with short_dir() as run:
        async with http_target("127.0.0.2") as target:
            proxy = await start_proxy(
                run / "p.sock",
                HostFilter([f"127.0.0.2:{target.port}"]),
                lambda host, port: blocked.append((host, port)),
            )
            port = free_port()
            try:
                child = await asyncio.create_subprocess_exec(
                    *bridge_prefix(sys.executable, str(proxy.socket_path), port),
                    sys.executable,
                    "-c",
                    FETCH,
                    f"http://127.0.0.2:{target.port}/declared",
                    "http://undeclared.example/",
                    env={**os.environ, **proxy_env(port)},
                    stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.PIPE,
                )
                out, err = await asyncio.wait_for(child.communicate(), 30)
            finally:
                await proxy.close()
    assert child.returncode == 7, err.decode()
    lines = out.decode().splitlines()
    assert lines[0] == f"200 GET /declared HTTP/1.1|host=127.0.0.2:{target.port}|body=", lines
    assert lines[1].startswith("403 portico sandbox: undeclared.example:80 is not in"), lines
    assert blocked == [("undeclared.example", 80)]


async def test_bridge_forwards_signals_and_dies_of_the_commands_signal() -> None:
    waits = (
        "import signal, sys, time\n"
        "signal.signal(signal.SIGTERM, lambda *_: (print('child got TERM', flush=True), "
        "sys.exit(3)))\n"
        "print('ready', flush=True)\n"
        "time.sleep(30)\n"
    )
    with short_dir() as run:
        child = await asyncio.create_subprocess_exec(
            *bridge_prefix(sys.executable, str(run / "none.sock"), free_port()),
            sys.executable,
            "-c",
            waits,
            stdout=asyncio.subprocess.PIPE,
        )
        assert child.stdout is not None
        assert await asyncio.wait_for(child.stdout.readline(), 30) == b"ready\n"
        child.send_signal(signal.SIGTERM)
        rest = await asyncio.wait_for(child.stdout.read(), 30)
        assert await child.wait() == 3
        assert rest == b"child got TERM\n"
        killed = await asyncio.create_subprocess_exec(
            *bridge_prefix(sys.executable, str(run / "none.sock"), free_port()),
            sys.executable,
            "-c",
            "import os, signal; os.kill(os.getpid(), signal.SIGKILL)",
        )
        assert await asyncio.wait_for(killed.wait(), 30) == -signal.SIGKILL


async def test_bridge_refuses_bad_arguments() -> None:
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        BRIDGE_SCRIPT,
        "--socket",
        "/x",
        "--port",
        "http",
        "--",
        "true",
        stderr=asyncio.subprocess.PIPE,
    )
    _, err = await child.communicate()
    assert child.returncode == 2
    assert b"bad value: --port http" in err


PROBE = """
import socket, subprocess, sys, urllib.request, urllib.error
declared, port = sys.argv[1], int(sys.argv[2])
def fetch(url):
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            return f"{answer.status} {answer.read().decode()}"
    except urllib.error.HTTPError as exc:
        return f"{exc.code}"
print("http-declared", fetch(f"http://{declared}:{port}/in"))
print("http-undeclared", fetch("http://undeclared.example/"))
tunnel = socket.create_connection(("127.0.0.1", int(sys.argv[3])), 10)
tunnel.sendall(f"CONNECT {declared}:{port} HTTP/1.1\\r\\n\\r\\n".encode())
print("connect", tunnel.recv(1024).split(b"\\r\\n")[0].decode())
tunnel.sendall(b"GET /tls-ish HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n")
reply = b"".join(iter(lambda: tunnel.recv(4096), b""))
print("tunnelled", reply.split(b"\\r\\n\\r\\n")[1].decode())
try:
    socket.create_connection((declared, port), 2).close()
    print("direct ok")
except OSError as exc:
    print("direct refused", type(exc).__name__)
curl = sys.argv[4]
if curl:
    done = subprocess.run([curl, "-sS", "-o", "/dev/null", "-w", "%{http_code}",
                           "https://undeclared.example/"], capture_output=True, text=True)
    print("curl-https-undeclared", done.returncode, done.stderr.strip().split()[-1])
"""


async def test_inside_bwrap_only_declared_hosts_through_the_bridge() -> None:
    bwrap = need_bwrap()
    blocked: list[tuple[str, int]] = []
    curl = shutil.which("curl") or ""
    inner_port = 3128  # the sandbox has its own loopback: any port is free there
    with short_dir() as run:
        home = run / "home"
        home.mkdir()
        sockets = run / "net"
        sockets.mkdir()
        async with http_target("127.0.0.2") as target:
            proxy = await start_proxy(
                sockets / "proxy.sock",
                HostFilter([f"127.0.0.2:{target.port}"]),
                lambda host, port: blocked.append((host, port)),
            )
            try:
                plan = BwrapPlan(
                    home=str(home),
                    read=[sys.base_prefix, sys.prefix, BRIDGE_SCRIPT, str(sockets)],
                )
                command = [
                    *bridge_prefix(sys.executable, str(proxy.socket_path), inner_port),
                    sys.executable,
                    "-c",
                    PROBE,
                    "127.0.0.2",
                    str(target.port),
                    str(inner_port),
                    curl,
                ]
                child = await asyncio.create_subprocess_exec(
                    *plan.argv(bwrap, command),
                    env={**os.environ, **proxy_env(inner_port)},
                    stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.PIPE,
                )
                out, err = await asyncio.wait_for(child.communicate(), 60)
            finally:
                await proxy.close()
    assert child.returncode == 0, err.decode()
    seen = dict(line.split(" ", 1) for line in out.decode().splitlines())
    assert seen["http-declared"] == f"200 GET /in HTTP/1.1|host=127.0.0.2:{target.port}|body="
    assert seen["http-undeclared"] == "403"
    assert seen["connect"] == "HTTP/1.1 200 Connection Established"
    assert seen["tunnelled"] == "GET /tls-ish HTTP/1.1|host=x|body="
    assert seen["direct"].startswith("refused"), seen
    expected = [("undeclared.example", 80)]
    if curl:
        # curl sends CONNECT for https: "(56) CONNECT tunnel failed, response 403"
        assert seen["curl-https-undeclared"] == "56 403", seen
        expected.append(("undeclared.example", 443))
    assert blocked == expected
    assert len(target.connections) == 2  # the proxied GET and the tunnel, nothing direct


NODE_PROBE = """
const [declared, undeclared] = process.argv.slice(1);
(async () => {
  for (const url of [declared, undeclared]) {
    try {
      const answer = await fetch(url);
      console.log(answer.status, await answer.text());
    } catch (error) {
      console.log("failed", error.cause?.code || error.message);
    }
  }
})();
"""


async def test_node_fetch_inside_bwrap_goes_through_the_proxy() -> None:
    """Most sandboxed servers are npx ones: Node's fetch honours the proxy variables
    (NODE_USE_ENV_PROXY, which proxy_env sets) and so reaches only declared hosts."""
    bwrap = need_bwrap()
    node = NODE.resolve()
    if not node.is_file():
        pytest.skip(f"no node at {NODE}")
    blocked: list[tuple[str, int]] = []
    with short_dir() as run:
        home = run / "home"
        home.mkdir()
        sockets = run / "net"
        sockets.mkdir()
        async with http_target("127.0.0.2") as target:
            proxy = await start_proxy(
                sockets / "proxy.sock",
                HostFilter([f"127.0.0.2:{target.port}"]),
                lambda host, port: blocked.append((host, port)),
            )
            try:
                plan = BwrapPlan(
                    home=str(home),
                    read=[
                        sys.base_prefix,
                        sys.prefix,
                        BRIDGE_SCRIPT,
                        str(sockets),
                        str(node.parent),
                    ],
                )
                command = [
                    *bridge_prefix(sys.executable, str(proxy.socket_path), 3128),
                    str(node),
                    "-e",
                    NODE_PROBE,
                    f"http://127.0.0.2:{target.port}/from-node",
                    "https://undeclared.example/",
                ]
                child = await asyncio.create_subprocess_exec(
                    *plan.argv(bwrap, command),
                    env={**os.environ, **proxy_env(3128)},
                    stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.PIPE,
                )
                out, err = await asyncio.wait_for(child.communicate(), 60)
            finally:
                await proxy.close()
    assert child.returncode == 0, err.decode()
    lines = out.decode().splitlines()
    assert lines[0] == f"200 GET /from-node HTTP/1.1|host=127.0.0.2:{target.port}|body=", lines
    assert lines[1].startswith("failed"), lines
    assert blocked == [("undeclared.example", 443)]


async def test_stopping_the_sandbox_stops_the_command_behind_the_bridge() -> None:
    """The stdio client ends a server by signalling the process it started (bwrap): the
    command behind the bridge must not outlive it."""
    bwrap = need_bwrap()
    ticker = (
        "import sys, time\n"
        "out = open(sys.argv[1], 'a')\n"
        "print('ready', flush=True)\n"
        "while True:\n"
        "    out.write('tick\\n'); out.flush(); time.sleep(0.05)\n"
    )
    with short_dir() as run:
        home = run / "home"
        home.mkdir()
        work = run / "work"
        work.mkdir()
        ticks = work / "ticks.txt"
        plan = BwrapPlan(
            home=str(home), read=[sys.base_prefix, sys.prefix, BRIDGE_SCRIPT], write=[str(work)]
        )
        command = [
            *bridge_prefix(sys.executable, str(run / "none.sock"), 3128),
            sys.executable,
            "-c",
            ticker,
            str(ticks),
        ]
        child = await asyncio.create_subprocess_exec(
            *plan.argv(bwrap, command), stdout=asyncio.subprocess.PIPE
        )
        assert child.stdout is not None
        assert await asyncio.wait_for(child.stdout.readline(), 30) == b"ready\n"
        child.terminate()
        await asyncio.wait_for(child.wait(), 30)
        await asyncio.sleep(0.3)
        settled = ticks.read_text().count("tick")
        await asyncio.sleep(0.5)
        assert ticks.read_text().count("tick") == settled  # nothing ticks any more
