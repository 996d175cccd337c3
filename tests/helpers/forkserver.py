"""A fork server: one interpreter imports the heavy modules once (the MCP SDK, Portico:
about a second of CPU per process), then forks a child per request that runs a script as
``python script.py args`` would, with the caller's arguments, environment, working folder
and standard streams, and exits with the script's code.

Only for test code that a peer runs as a command many times (the conformance suite's
client, ``tests/conformance/adapter.py``): the child is still a process of its own, so
everything the script does (Portico's config, hub, OAuth, its exit code) stays real; only
the import is shared. The random module reseeds itself in a forked child.

    python tests/helpers/forkserver.py SOCKET MODULE...   # preload, then serve
    python -S tests/helpers/forkclient.py SOCKET SCRIPT ARGS...   # what the peer runs
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import json
import os
import runpy
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

CLIENT = Path(__file__).resolve().with_name("forkclient.py")
READY = "forkserver ready"
_BASE_PATH: list[str] = []  # sys.path without this script's folder: what a script's child gets


def _reap(signum: int, frame: FrameType | None) -> None:
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass


def _read_request(conn: socket.socket) -> tuple[dict[str, object], list[int]]:
    data, fds, _flags, _addr = socket.recv_fds(conn, 1 << 16, 3)
    (size,) = struct.unpack("!I", data[:4])
    body = data[4:]
    while len(body) < size:
        chunk = conn.recv(size - len(body))
        if not chunk:
            raise EOFError("the client went away mid-request")
        body += chunk
    return json.loads(body), fds


def _watch(conn: socket.socket) -> None:
    """The client (the command the peer started) ended or was killed: so does the child."""
    with contextlib.suppress(OSError):
        conn.recv(1)
    os._exit(143)


def _child(conn: socket.socket, request: dict[str, object], fds: list[int]) -> None:
    code = 1
    try:
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        environ, argv = request["env"], request["argv"]
        assert isinstance(environ, dict) and isinstance(argv, list)
        os.environ.clear()
        os.environ.update(environ)
        os.chdir(str(request["cwd"]))
        argv = [str(arg) for arg in argv]
        sys.argv = argv
        sys.path[:] = [str(Path(argv[0]).resolve().parent), *_BASE_PATH]  # as `python script.py`
        threading.Thread(target=_watch, args=(conn,), daemon=True).start()
        try:
            runpy.run_path(argv[0], run_name="__main__")
            code = 0
        except SystemExit as exc:
            if exc.code is None:
                code = 0
            elif isinstance(exc.code, int):
                code = exc.code
            else:
                print(exc.code, file=sys.stderr)
                code = 1
        except BaseException:
            import traceback

            traceback.print_exc()
            code = 1
        atexit._run_exitfuncs()
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        with contextlib.suppress(OSError):
            conn.sendall(str(code).encode())
        os._exit(code)


def serve(path: str, preload: list[str]) -> None:
    for name in preload:
        importlib.import_module(name)
    signal.signal(signal.SIGCHLD, _reap)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(64)
    print(READY, flush=True)
    while True:
        conn, _ = server.accept()
        try:
            request, fds = _read_request(conn)
        except (OSError, EOFError, ValueError):
            conn.close()
            continue
        pid = os.fork()
        if pid == 0:
            server.close()
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            _child(conn, request, fds)
        conn.close()
        for fd in fds:
            os.close(fd)


@contextmanager
def fork_server(folder: Path, *preload: str) -> Iterator[list[str]]:
    """A running fork server with ``preload`` imported; yields the command prefix that runs
    a script through it (``[python, -S, forkclient.py, SOCKET]`` + script and arguments).
    Where the platform cannot fork, the prefix is plain ``[python]``."""
    if not hasattr(os, "fork") or sys.platform != "linux":
        yield [sys.executable]
        return
    path = str(folder / "fork.sock")
    proc = subprocess.Popen(
        [sys.executable, __file__, path, *preload], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        deadline = time.monotonic() + 60
        line = proc.stdout.readline()
        if line.strip() != READY or time.monotonic() > deadline:
            raise RuntimeError(f"the fork server did not start (said {line!r})")
        yield [sys.executable, "-S", str(CLIENT), path]
    finally:
        proc.kill()
        proc.wait(timeout=10)
        if proc.stdout is not None:
            proc.stdout.close()


if __name__ == "__main__":
    _BASE_PATH[:] = sys.path[1:]
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repo, for tests.*
    serve(sys.argv[1], sys.argv[2:])
