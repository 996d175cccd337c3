"""Attack: a sandboxed server talks to the person's other processes, not through files or
the network: a daemon's abstract Unix socket (no file to refuse: D-Bus, X11 and others
listen on one), a daemon's named socket in a folder outside its sandbox (ssh-agent's,
gpg-agent's, docker.sock: each signs, decrypts or runs as the person), and a signal to
one of the person's processes (Portico itself). Under Landlock, which has no namespaces,
each went through; now the scopes (ABI 6) and the seccomp filter (no ``socket(AF_UNIX)``
where Landlock cannot govern named sockets) refuse them, in both network modes. Under
bwrap the server has its own network (abstract sockets are per network namespace), its
own /tmp and its own process numbers. ``socketpair`` (a server's own plumbing) stays."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from portico.runtime.sandbox.bwrap import BwrapPlan
from portico.runtime.sandbox.landlock import landlock_argv
from portico.runtime.sandbox.landlock_exec import SCOPE_ABI, kernel_abi
from tests.runtime.sandbox.targets import need_bwrap, need_landlock, short_dir

# argv: abstract name, named socket path, a pid of the person's; "label ok|refused ..."
PROBE = """
import os, socket, sys
def attempt(label, fn):
    try:
        fn()
        print(label, "ok")
    except OSError as exc:
        print(label, "refused", type(exc).__name__)
def dial(address):
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(5)
        s.connect(address)
        assert s.recv(5) == b"hello"
attempt("abstract", lambda: dial("\\0" + sys.argv[1]))
attempt("named", lambda: dial(sys.argv[2]))
attempt("signal", lambda: os.kill(int(sys.argv[3]), 0))
attempt("socketpair", lambda: [s.close() for s in socket.socketpair()])
"""


class Daemons:
    """An abstract and a named Unix socket answering b"hello", and a sleeping process."""

    def __init__(self, folder: Path) -> None:
        self.abstract = f"portico-test-daemon-{id(self)}"
        self.named = str(folder / "agent.sock")
        self.sockets = [socket.socket(socket.AF_UNIX), socket.socket(socket.AF_UNIX)]
        self.sockets[0].bind("\0" + self.abstract)
        self.sockets[1].bind(self.named)
        for listener in self.sockets:
            listener.listen()
            threading.Thread(target=self._serve, args=(listener,), daemon=True).start()
        self.victim = subprocess.Popen(["sleep", "60"])

    @staticmethod
    def _serve(listener: socket.socket) -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with conn:
                conn.sendall(b"hello")

    def args(self) -> list[str]:
        return [self.abstract, self.named, str(self.victim.pid)]

    def close(self) -> None:
        for listener in self.sockets:
            listener.close()
        self.victim.kill()
        self.victim.wait()


@pytest.fixture
def daemons() -> Iterator[Daemons]:
    with short_dir() as folder:
        running = Daemons(folder)
        try:
            yield running
        finally:
            running.close()


def _results(argv: list[str]) -> dict[str, str]:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return dict(line.split(" ", 1) for line in done.stdout.splitlines())


def test_outside_any_sandbox_each_daemon_answers(daemons: Daemons) -> None:
    got = _results([sys.executable, "-I", "-c", PROBE, *daemons.args()])
    assert set(got.values()) == {"ok"}, got  # the probe can tell


@pytest.mark.parametrize("net", ["none", "any"])
def test_under_landlock_the_daemons_and_signals_are_refused(daemons: Daemons, net: str) -> None:
    need_landlock(4 if net == "none" else 1)
    if kernel_abi() < SCOPE_ABI:
        pytest.skip(f"Landlock ABI {kernel_abi()} has no scopes (abstract sockets, signals)")
    command = [sys.executable, "-I", "-c", PROBE, *daemons.args()]
    folder = str(Path(daemons.named).parent)  # readable, even: a socket is not a file
    argv = landlock_argv(
        sys.executable, command, read=[sys.base_prefix, sys.prefix, folder], net=net
    )
    got = _results(argv)
    assert got["abstract"] == "refused PermissionError", got
    assert got["named"] == "refused PermissionError", got
    assert got["signal"] == "refused PermissionError", got
    assert got["socketpair"] == "ok", got


def test_under_bwrap_the_daemons_and_the_persons_processes_are_not_there(
    daemons: Daemons, tmp_path: Path
) -> None:
    bwrap = need_bwrap()
    home = tmp_path / "home"
    home.mkdir()
    plan = BwrapPlan(home=str(home), read=[sys.base_prefix, sys.prefix])
    got = _results(plan.argv(bwrap, [sys.executable, "-I", "-c", PROBE, *daemons.args()]))
    assert got["abstract"] == "refused ConnectionRefusedError", got  # its own network
    assert got["named"] == "refused FileNotFoundError", got  # its own /tmp
    assert got["signal"] == "refused ProcessLookupError", got  # its own process numbers
    assert got["socketpair"] == "ok", got
