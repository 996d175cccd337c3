"""The seccomp filter that goes with the Landlock rules, against a real process making
system calls the filter's socket rules never see: a call through another architecture's
table (i386's ``int 0x80`` on x86_64: its numbers differ, so socketcall there would
dodge the socket rule) kills the process; an x32 call (the x32 bit set in the number,
reported as x86_64) is refused with EPERM. Each is first made outside the filter, so a
kernel without the i386 table is skipped, not mistaken for the filter."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys

import pytest

from portico.runtime.sandbox.landlock import landlock_argv
from portico.runtime.sandbox.landlock_exec import X32_SYSCALL_BIT
from tests.runtime.sandbox.targets import need_landlock

# prints what the call returned: "pid N" (i386 getpid) or "ret R errno E" (x32 getpid)
CALLER = """
import ctypes, mmap, sys
if sys.argv[1] == "i386":
    # mov eax, 20 (getpid in i386's table); int 0x80; ret
    code = bytes([0xB8, 0x14, 0, 0, 0, 0xCD, 0x80, 0xC3])
    page = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    page.write(code)
    call = ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(page)))
    print("pid", call(), flush=True)
else:
    libc = ctypes.CDLL(None, use_errno=True)
    ret = libc.syscall(int(sys.argv[2]))
    print("ret", ret, "errno", ctypes.get_errno(), flush=True)
"""
X32_GETPID = X32_SYSCALL_BIT | 39


def _x86_64() -> None:
    if os.uname().machine != "x86_64":
        pytest.skip(f"the foreign-arch calls here are x86_64's (this is {os.uname().machine})")


def _run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=60)


def _filtered(*args: str) -> list[str]:
    """The caller under the Landlock rules with TCP shut off, so with the seccomp filter."""
    command = [sys.executable, "-I", "-c", CALLER, *args]
    return landlock_argv(sys.executable, command, read=[sys.base_prefix, sys.prefix], net="none")


def test_a_call_through_the_i386_table_kills_the_process() -> None:
    _x86_64()
    need_landlock(4)
    outside = _run([sys.executable, "-I", "-c", CALLER, "i386"])
    if outside.returncode != 0 or not outside.stdout.startswith("pid "):
        pytest.skip(f"this kernel has no i386 system calls (ia32 emulation off): {outside}")
    inside = _run(_filtered("i386"))
    assert inside.returncode == -signal.SIGSYS, inside
    assert "pid" not in inside.stdout, inside.stdout


def test_an_x32_call_is_refused() -> None:
    _x86_64()
    need_landlock(4)
    outside = _run([sys.executable, "-I", "-c", CALLER, "x32", str(X32_GETPID)])
    assert outside.returncode == 0, outside.stderr
    # without the filter: the pid (x32 built in) or ENOSYS (not built in), never EPERM
    assert f"errno {errno.EPERM}" not in outside.stdout, outside.stdout
    inside = _run(_filtered("x32", str(X32_GETPID)))
    assert inside.returncode == 0, inside.stderr
    assert inside.stdout.split() == ["ret", "-1", "errno", str(errno.EPERM)], inside.stdout
