"""Time from launching a command to its first visible window on an X display (xdotool).

Used by installers/check and tests/benchmarks/test_bench_launch.py. Each launch gets a
fresh PORTICO_HOME unless one is given, and is quit with SIGTERM (the app's clean quit).
The app is asked for its own timestamps (``PORTICO_TRACE_LAUNCH``, portico/ui/trace.py) on
the same clock, so what xdotool saw can be set beside what the app did.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

POLL = 0.05  # each poll is an X connection; a busy Xvfb refuses floods
TRACE_PREFIX = "portico-trace "
# A nice value (e.g. -15) for the sessions of the app and Xvfb (root only): with the
# kernel's autogroup scheduling every session gets an equal share of the CPUs whatever
# its processes' nice values, so on a machine busy with other sessions this is the way to
# see what the launch takes on an idle one (docs/platform-notes.md, "Launch").
PRIORITY_ENV = "PORTICO_LAUNCH_PRIORITY"


def prioritised() -> int | None:
    value = os.environ.get(PRIORITY_ENV, "")
    try:
        return int(value) if value else None
    except ValueError:
        return None


def _spawn(command: Sequence[str], **kwargs: object) -> subprocess.Popen[bytes]:
    """Popen, in a session of its own at the PRIORITY_ENV autogroup nice when asked."""
    nice = prioritised()
    new_session = nice is not None
    proc = subprocess.Popen(command, start_new_session=new_session, **kwargs)  # type: ignore[call-overload]
    if nice is not None:
        try:
            Path(f"/proc/{proc.pid}/autogroup").write_text(str(nice), encoding="ascii")
        except OSError as exc:
            print(f"launch_timing: {PRIORITY_ENV} ignored: {exc}")
    return proc  # type: ignore[no-any-return]


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
    trace: dict[str, float] | None = None,
) -> tuple[float, subprocess.Popen[bytes], str]:
    """Start ``command``; return (seconds to its first visible window, the process, the
    window id). Unless ``keep``, the app is quit and waited for. ``trace`` gets the app's
    own phases ("first paint", "chats ready", …) in seconds since the same start."""
    env = dict(os.environ if environ is None else environ)
    env["DISPLAY"] = display
    env["QT_QPA_PLATFORM"] = "xcb"  # (the test run sets offscreen for itself)
    env.setdefault("PORTICO_HOME", tempfile.mkdtemp(prefix="portico-launch-"))
    origin = time.time()
    env["PORTICO_TRACE_LAUNCH"] = repr(origin)
    started = time.perf_counter()
    proc = _spawn(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    stderr: list[str] = []
    reader = threading.Thread(target=_read_stderr, args=(proc, stderr, trace), daemon=True)
    reader.start()
    window = None
    while window is None:
        if proc.poll() is not None:
            reader.join(5)
            err = "".join(stderr)
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
        reader.join(5)
    return elapsed, proc, window


def _read_stderr(
    proc: subprocess.Popen[bytes], lines: list[str], trace: dict[str, float] | None
) -> None:
    """Drain the app's stderr (a full pipe would stall it) and pick out its trace lines."""
    assert proc.stderr is not None
    for raw in proc.stderr:
        line = raw.decode(errors="replace")
        if line.startswith(TRACE_PREFIX):
            if trace is not None:
                fields = json.loads(line[len(TRACE_PREFIX) :])
                trace[fields["phase"]] = fields["t"]
                trace[f"{fields['phase']} cpu"] = fields["cpu"]
            continue
        lines.append(line)


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
        number = free_display()
        self.proc = _spawn(
            ["Xvfb", f":{number}", "-screen", "0", self.size, "-nolisten", "tcp"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 20
        while not _listening(number):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"Xvfb :{number} did not start")
            time.sleep(0.05)
        self.display = f":{number}"
        return self.display

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(10)


def _listening(number: int) -> bool:
    for address in (f"\0/tmp/.X11-unix/X{number}", f"/tmp/.X11-unix/X{number}"):
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            try:
                sock.connect(address)
            except OSError:
                continue
            return True
    return False


def free_display(first: int = 200) -> int:
    """A display number nobody uses, by socket (abstract and file) and lock file: an X
    server in another sandbox can hold the abstract socket of a number whose file is free,
    and clients try the abstract socket first."""
    for number in range(first, first + 500):
        if not _listening(number) and not Path(f"/tmp/.X{number}-lock").exists():
            return number
    raise RuntimeError("no free X display number")
