"""Attack: a sandboxed server under the Landlock fallback sends what it read out through a
socket Landlock does not see. Landlock's network rules (ABI 4+) cover TCP only, so a
server whose TCP is held to its proxy's port could still send a UDP datagram (a DNS query
to a resolver it controls carries a secret in the name), an ICMP echo, an AF_PACKET frame
or an AF_VSOCK stream to the VM's host. The launcher adds a seccomp filter: an AF_INET /
AF_INET6 socket must be a TCP stream; AF_NETLINK stays (local; AF_UNIX too where Landlock
governs named sockets: test_attack_host_daemons), every other family and io_uring (which
makes sockets the filter never sees) get EPERM. The real prying server through a real
connection, and the launcher with each kind of socket."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from portico.runtime.sandbox import probe
from portico.runtime.sandbox.landlock import landlock_argv
from portico.runtime.sandbox.landlock_exec import UNIX_ABI, kernel_abi, socket_filter
from tests.runtime.sandbox.targets import http_target, need_landlock, prying, running, text


@pytest.fixture
def landlock_only(monkeypatch: pytest.MonkeyPatch) -> object:
    monkeypatch.setenv(probe.METHODS_ENV, "landlock")
    probe.forget()
    yield None
    probe.forget()


@pytest.mark.slow
async def test_prying_server_under_landlock_cannot_send_udp(
    project: Path, landlock_only: object
) -> None:
    need_landlock(4)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as catcher:
        catcher.bind(("127.0.0.1", 0))
        catcher.settimeout(0.5)
        port = catcher.getsockname()[1]
        async with http_target("127.0.0.2") as target:
            declared = f"127.0.0.2:{target.port}"
            async with running(prying(project, network_allow=(declared,))) as conn:
                sent = await text(conn, "udp", host="127.0.0.1", port=port)
                dns = await text(conn, "udp", host="127.0.0.1", port=53)
                # TCP through its proxy still works: only the other sockets are gone
                fetched = await text(conn, "fetch", url=f"http://{declared}/in")
        assert sent == "refused: PermissionError: Operation not permitted", sent
        assert dns.startswith("refused: PermissionError"), dns
        assert fetched.startswith("ok: GET /in"), fetched
        with pytest.raises(TimeoutError):
            catcher.recvfrom(64)  # nothing arrived


PROBE = """
import socket, sys
def udp():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.sendto(b"x", ("127.0.0.1", int(sys.argv[1])))
tries = {
    "udp": udp,
    "udp6": lambda: socket.socket(socket.AF_INET6, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC),
    "icmp": lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_ICMP),
    "raw": lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_UDP),
    "sctp": lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM, 132),
    "packet": lambda: socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM),
    "vsock": lambda: socket.socket(40, socket.SOCK_STREAM),
    "tcp": lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM | socket.SOCK_NONBLOCK),
    "tcp6": lambda: socket.socket(socket.AF_INET6, socket.SOCK_STREAM, socket.IPPROTO_TCP),
    "unix": lambda: socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM),
    "netlink": lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0),
}
for name, make in tries.items():
    try:
        made = make()
        if made is not None:
            made.close()
        print(name, "ok")
    except OSError as exc:
        print(name, exc.errno)
"""


def test_the_launcher_lets_only_tcp_and_netlink_sockets_be_made() -> None:
    need_landlock(4)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as catcher:
        catcher.bind(("127.0.0.1", 0))
        argv = landlock_argv(
            sys.executable,
            [sys.executable, "-I", "-c", PROBE, str(catcher.getsockname()[1])],
            read=[sys.base_prefix, sys.prefix],
            net="none",
        )
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    got = dict(line.split() for line in done.stdout.splitlines())
    refused = {"udp", "udp6", "icmp", "raw", "sctp", "packet", "vsock"}
    made = {"tcp", "tcp6", "netlink"}
    # AF_UNIX only where Landlock governs named sockets (test_attack_host_daemons)
    (made if kernel_abi() >= UNIX_ABI else refused).add("unix")
    assert {name for name, answer in got.items() if answer == "1"} == refused, got  # EPERM
    assert {name for name, answer in got.items() if answer == "ok"} == made, got


def test_io_uring_is_refused_and_the_filter_fails_closed_elsewhere() -> None:
    need_landlock(4)
    # io_uring_setup(1, params): EPERM from the filter (EFAULT-free: params is NULL, so an
    # unfiltered kernel answers EFAULT, or ENOSYS / EPERM where io_uring is disabled)
    call = (
        "import ctypes, sys\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "libc.syscall(425, 1, None)\n"
        "print(ctypes.get_errno())\n"
    )
    argv = landlock_argv(
        sys.executable,
        [sys.executable, "-I", "-c", call],
        read=[sys.base_prefix, sys.prefix],
        net="none",
    )
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "1", done.stdout
    with pytest.raises(RuntimeError, match=r"this machine \(mips\) has no seccomp filter"):
        socket_filter("mips")
