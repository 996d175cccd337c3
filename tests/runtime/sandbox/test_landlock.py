"""The Landlock fallback run for real: a child under landlock_exec reads what it was given,
writes only where it may, is refused the rest (a home file included) and, with --net none,
cannot dial a listener on loopback."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from portico.runtime.sandbox import landlock_exec
from portico.runtime.sandbox.bridge import bridge_prefix, proxy_env
from portico.runtime.sandbox.landlock import landlock_argv, parse_net
from portico.runtime.sandbox.netproxy import HostFilter, start_proxy
from tests.helpers.servers import free_port
from tests.runtime.sandbox.targets import (
    PROBE,
    http_target,
    need_landlock,
    probe_layout,
    probe_results,
    short_dir,
)


def _run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("net", ["any", "none"])
def test_child_reads_its_paths_and_is_refused_the_rest(tmp_path: Path, net: str) -> None:
    need_landlock(1 if net == "any" else 4)
    home, project, work = probe_layout(tmp_path)
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    with listener:
        socket.create_connection(("127.0.0.1", port), 1).close()  # reachable outside
        command = [sys.executable, "-I", "-c", PROBE, str(home), str(project), str(work), str(port)]
        argv = landlock_argv(
            sys.executable,
            command,
            read=[str(project), sys.base_prefix, sys.prefix],
            write=[str(work), str(tmp_path / "missing")],
            net=net,
        )
        done = _run(argv)
    assert done.returncode == 0, done.stderr
    lines = probe_results(done.stdout)
    assert lines["home"] == "refused PermissionError", done.stdout
    assert lines["list-home"] == "refused PermissionError", done.stdout
    assert lines["project"] == "ok", done.stdout
    assert lines["write-project"] == "refused PermissionError", done.stdout
    assert lines["write-work"] == "ok", done.stdout
    assert lines["devnull"] == "ok", done.stdout
    if net == "none":
        assert lines["dial"] == "refused PermissionError", done.stdout
    else:
        assert lines["dial"] == "ok", done.stdout
    assert (work / "out.txt").read_text() == "x"
    assert not (project / "dropped.txt").exists()


def test_net_ports_allow_only_those(tmp_path: Path) -> None:
    need_landlock(4)
    allowed = socket.create_server(("127.0.0.1", 0))
    other = socket.create_server(("127.0.0.1", 0))
    with allowed, other:
        ports = [s.getsockname()[1] for s in (allowed, other)]
        probe = (
            "import socket, sys\n"
            "for port in sys.argv[1:]:\n"
            "    try:\n"
            "        socket.create_connection(('127.0.0.1', int(port)), 2).close(); print('ok')\n"
            "    except OSError as exc: print(type(exc).__name__)\n"
        )
        argv = landlock_argv(
            sys.executable,
            [sys.executable, "-I", "-c", probe, *map(str, ports)],
            read=[sys.base_prefix, sys.prefix],
            net=str(ports[0]),
        )
        done = _run(argv)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["ok", "PermissionError"]


def test_exit_code_and_bad_arguments(tmp_path: Path) -> None:
    need_landlock()
    done = _run(landlock_argv(sys.executable, ["/bin/sh", "-c", "exit 5"]))
    assert done.returncode == 5, done.stderr
    done = _run([sys.executable, "-m", "portico.runtime.sandbox.landlock_exec", "--net", "web"])
    assert done.returncode == 2
    assert "no '--' before the command" in done.stderr
    done = _run(landlock_argv(sys.executable, ["true"], net="web"))
    assert done.returncode == 2
    assert "--net takes any, none or ports like 443,8080; got 'web'" in done.stderr
    done = _run(landlock_argv(sys.executable, [str(tmp_path / "no-such-program")]))
    assert done.returncode == 127
    assert "cannot run" in done.stderr and "no-such-program" in done.stderr


def test_setenv_reaches_the_command_only(tmp_path: Path) -> None:
    need_landlock()
    show = ["/bin/sh", "-c", 'printf "%s" "$LD_LIBRARY_PATH"']
    done = _run(landlock_argv(sys.executable, show, setenv={"LD_LIBRARY_PATH": "/a=b"}))
    assert done.returncode == 0 and done.stdout == "/a=b", done.stderr
    argv = landlock_argv(sys.executable, ["true"])
    at = argv.index("--")
    done = _run([*argv[:at], "--setenv", "NOVALUE", *argv[at:]])
    assert done.returncode == 2 and "--setenv takes NAME=VALUE; got 'NOVALUE'" in done.stderr


def test_parse_net() -> None:
    assert parse_net("any") is None
    assert parse_net("none") == ()
    assert parse_net("443,8080") == (443, 8080)
    for bad in ("", "0", "70000", "443,", "https"):
        with pytest.raises(ValueError, match="--net takes"):
            parse_net(bad)


FETCH = """
import socket, sys, urllib.request, urllib.error
declared, direct_port = sys.argv[1], int(sys.argv[2])
try:
    with urllib.request.urlopen(declared, timeout=10) as answer:
        print("declared", answer.status)
except urllib.error.HTTPError as exc:
    print("declared", exc.code)
try:
    urllib.request.urlopen("http://undeclared.example/", timeout=10)
except urllib.error.HTTPError as exc:
    print("undeclared", exc.code)
try:
    socket.create_connection(("127.0.0.2", direct_port), 2).close()
    print("direct ok")
except OSError as exc:
    print("direct", type(exc).__name__)
"""


async def test_without_bwrap_the_bridge_outside_and_landlock_ports_inside() -> None:
    """The fallback's network: the bridge runs outside the rules on a host loopback port,
    and Landlock lets the command connect to that port only, so HTTP(S) goes through the
    proxy and a direct dial is refused (weaker than a namespace: see platform-notes)."""
    need_landlock(4)
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
                restricted = landlock_argv(
                    sys.executable,
                    [
                        sys.executable,
                        "-I",
                        "-c",
                        FETCH,
                        f"http://127.0.0.2:{target.port}/",
                        str(target.port),
                    ],
                    read=[sys.base_prefix, sys.prefix],
                    net=str(port),
                )
                child = await asyncio.create_subprocess_exec(
                    *bridge_prefix(sys.executable, str(proxy.socket_path), port),
                    *restricted,
                    env={**os.environ, **proxy_env(port)},
                    stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.PIPE,
                )
                out, err = await asyncio.wait_for(child.communicate(), 60)
            finally:
                await proxy.close()
    assert child.returncode == 0, err.decode()
    assert out.decode().splitlines() == ["declared 200", "undeclared 403", "direct PermissionError"]
    assert blocked == [("undeclared.example", 80)]
    assert len(target.connections) == 1


def test_importing_the_sandbox_loads_no_library() -> None:
    """Every face imports the probe, and so the launcher's module, on every system:
    libc is loaded only when a syscall is made (Windows has no ``CDLL(None)``)."""
    desktop = str(Path(landlock_exec.__file__).parents[3])
    code = (
        f"import sys; sys.path.insert(0, {desktop!r})\n"
        "import portico.runtime.sandbox.describe\n"
        "from portico.runtime.sandbox import landlock_exec\n"
        "print(landlock_exec._libcs)\n"
    )
    done = _run([sys.executable, "-I", "-c", code])
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
