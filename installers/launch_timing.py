"""Time from launching a command to its first visible window on an X display (xdotool).

Used by installers/check and tests/benchmarks/test_bench_launch.py. Each launch gets a
fresh PORTICO_HOME unless one is given, and is quit with SIGTERM (the app's clean quit).
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

POLL = 0.01


def find_window(display: str, pattern: str = "^Portico$") -> str | None:
    proc = subprocess.run(
        ["xdotool", "search", "--onlyvisible", "--name", pattern],
        env={**os.environ, "DISPLAY": display},
        capture_output=True,
        text=True,
        check=False,
    )
    ids = proc.stdout.split()
    return ids[0] if ids else None


def drop_caches() -> bool:
    """Drop the page cache (root only) so the next launch reads everything from disk."""
    try:
        os.sync()
        Path("/proc/sys/vm/drop_caches").write_text("3\n", encoding="ascii")
        return True
    except OSError:
        return False


def launch(
    command: Sequence[str],
    display: str,
    *,
    environ: Mapping[str, str] | None = None,
    timeout: float = 60.0,
    keep: bool = False,
) -> tuple[float, subprocess.Popen[bytes], str]:
    """Start ``command``; return (seconds to its first visible window, the process, the
    window id). Unless ``keep``, the app is quit and waited for."""
    env = dict(os.environ if environ is None else environ)
    env["DISPLAY"] = display
    env.setdefault("QT_QPA_PLATFORM", "xcb")
    env.setdefault("PORTICO_HOME", tempfile.mkdtemp(prefix="portico-launch-"))
    started = time.perf_counter()
    proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    window = None
    while window is None:
        if proc.poll() is not None:
            err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
            raise RuntimeError(f"{command[0]} exited with {proc.returncode}: {err[-2000:]}")
        if time.perf_counter() - started > timeout:
            proc.kill()
            raise TimeoutError(f"no window from {command[0]} after {timeout} s")
        window = find_window(display)
        if window is None:
            time.sleep(POLL)
    elapsed = time.perf_counter() - started
    if not keep:
        quit_app(proc)
    return elapsed, proc, window


def quit_app(proc: subprocess.Popen[bytes], timeout: float = 60.0) -> int:
    proc.send_signal(signal.SIGTERM)
    try:
        return proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise


class Xvfb:
    """A private X server on a free display number (``with Xvfb() as display:``)."""

    def __init__(self, size: str = "1280x800x24") -> None:
        self.size = size
        self.proc: subprocess.Popen[bytes] | None = None
        self.display = ""

    def __enter__(self) -> str:
        read, write = os.pipe()
        self.proc = subprocess.Popen(
            ["Xvfb", "-displayfd", str(write), "-screen", "0", self.size, "-nolisten", "tcp"],
            pass_fds=(write,),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(write)
        with os.fdopen(read) as pipe:
            number = pipe.readline().strip()
        if not number:
            raise RuntimeError("Xvfb did not start")
        self.display = f":{number}"
        return self.display

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(10)
