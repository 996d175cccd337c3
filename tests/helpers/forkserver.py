"""A fork server: one interpreter imports the heavy modules once (the MCP SDK, Portico:
about half a second to a second of CPU per process), then forks a child per request that
runs a script (or a module, as ``python -m``) as a fresh ``python`` would, with the
caller's arguments, environment, working folder and standard streams.

The child is still a process of its own, so everything the script does (Portico's config,
hub, OAuth, a server's stdio, its exit code) stays real; only the import is shared. The
random module reseeds itself in a forked child. Used for commands the suite runs hundreds
of times: the conformance suite's client (``tests/conformance/adapter.py``), the
``portico`` commands of ``tests/helpers/cli.py`` and the SDK test servers of
``tests/servers/`` (``tests/servers/warm_start.py``).

What the caller sees is what ``python SCRIPT`` would give it: the client (forkclient.py)
exits with the child's code, or dies of the child's signal; a signal sent to the client
(SIGTERM, SIGINT, SIGHUP) is passed on to the child; a client killed outright takes the
child with it.

A request is refused, and the client then runs the command itself (``exec`` of a plain
``python``), when the child could not be what the caller asked for:
- the caller runs in a sandbox: other namespaces, ``no_new_privs`` or a seccomp filter
  (a forked child would run outside the caller's sandbox);
- the caller's ``PYTHON*`` variables differ from the server's (another ``PYTHONPATH``
  imports other code; the others change how an interpreter starts), except the two a
  child applies itself: ``PYTHONUNBUFFERED`` (its standard streams are made as a fresh
  interpreter would make them) and ``PYTHONDONTWRITEBYTECODE``, and a library's own
  (``PYTHON_KEYRING_BACKEND``: keyring reads it when a secret is first used);
- another user.

    python tests/helpers/forkserver.py SOCKET MODULE...   # preload, then serve
    python -S tests/helpers/forkclient.py SOCKET SCRIPT ARGS...   # what a peer runs
    python -S tests/helpers/forkclient.py SOCKET -m MODULE ARGS...
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import io
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
import types
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

CLIENT = Path(__file__).resolve().with_name("forkclient.py")
READY = "forkserver ready"
_BASE_PATH: list[str] = []  # sys.path without this script's folder: what a script's child gets
_CHILDREN: dict[int, socket.socket] = {}  # child pid -> its client's connection
_NAMESPACES = ("mnt", "net", "pid", "user", "ipc", "uts")


_APPLIED = frozenset({"PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE"})  # by the child itself
_LIBRARY = frozenset({"PYTHON_KEYRING_BACKEND"})  # read by a library when used, after the fork
_KEPT: list[object] = []  # the server's own streams: collected, they would close fds 0-2


def _python_variables(environ: dict[str, str] | os._Environ[str]) -> dict[str, str]:
    return {
        k: v
        for k, v in environ.items()
        if k.startswith("PYTHON") and k not in _APPLIED and k not in _LIBRARY
    }


_OWN_PYTHON = _python_variables(os.environ)


def _status_line(status: int) -> bytes:
    if os.WIFSIGNALED(status):
        return f"signal {os.WTERMSIG(status)}\n".encode()
    return f"exit {os.waitstatus_to_exitcode(status)}\n".encode()


def _reap(signum: int, frame: FrameType | None) -> None:
    """Each child that ended: its status goes to its client, whose connection then closes."""
    with contextlib.suppress(ChildProcessError):
        while True:
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                return
            conn = _CHILDREN.pop(pid, None)
            if conn is not None:
                with contextlib.suppress(OSError):
                    conn.sendall(_status_line(status))
                conn.close()


def _read_request(conn: socket.socket) -> tuple[dict[str, object], list[int]]:
    data, fds, _flags, _addr = socket.recv_fds(conn, 1 << 16, 3)
    if len(data) < 4:
        raise EOFError("a short request")
    (size,) = struct.unpack("!I", data[:4])
    body = data[4:]
    while len(body) < size:
        chunk = conn.recv(size - len(body))
        if not chunk:
            raise EOFError("the client went away mid-request")
        body += chunk
    return json.loads(body), fds


def _peer_status(pid: int) -> dict[str, str]:
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        fields[key] = value.strip()
    return fields


def refusal(conn: socket.socket, request: dict[str, object]) -> str | None:
    """Why the caller must run its command itself (see the module's docstring), or None."""
    pid, uid, _gid = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))
    if uid != os.getuid():
        return "another user"
    try:
        for name in _NAMESPACES:
            if os.readlink(f"/proc/{pid}/ns/{name}") != os.readlink(f"/proc/self/ns/{name}"):
                return f"another {name} namespace"
        status = _peer_status(pid)
    except OSError as exc:
        return f"cannot see the caller ({exc})"
    if status.get("NoNewPrivs", "0") != "0":
        return "no_new_privs is set"
    if status.get("Seccomp", "0") != "0":
        return "a seccomp filter"
    environ = request.get("env")
    if not isinstance(environ, dict) or _python_variables(environ) != _OWN_PYTHON:
        return "other PYTHON* variables"
    return None


def _watch(conn: socket.socket) -> None:
    """The client (the command the peer started) ended or was killed: so does the child."""
    with contextlib.suppress(OSError):
        while conn.recv(64):
            pass  # nothing else is sent after the request
    os._exit(143)


def _fresh_stdio(unbuffered: bool) -> None:
    """Standard streams on the caller's fds as a fresh interpreter makes them: stdout
    line-buffered on a terminal, stderr line-buffered, both unbuffered under
    ``PYTHONUNBUFFERED``; the server's encoding and error handlers."""
    for fd, name in ((0, "stdin"), (1, "stdout"), (2, "stderr")):
        old = getattr(sys, name)
        _KEPT.append(old)
        raw = io.FileIO(fd, "rb" if fd == 0 else "wb", closefd=False)
        binary: io.RawIOBase | io.BufferedIOBase
        if fd == 0:
            binary = io.BufferedReader(raw)
        elif unbuffered:
            binary = raw
        else:
            binary = io.BufferedWriter(raw)
        stream = io.TextIOWrapper(
            binary,  # type: ignore[arg-type]
            encoding=old.encoding,
            errors=old.errors,
            line_buffering=fd == 2 or (fd == 1 and os.isatty(fd)),
            write_through=unbuffered and fd != 0,
        )
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)


def _child(conn: socket.socket, request: dict[str, object], fds: list[int]) -> None:
    code = 1
    try:
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        environ, argv = request["env"], request["argv"]
        assert isinstance(environ, dict) and isinstance(argv, list)
        _fresh_stdio(bool(environ.get("PYTHONUNBUFFERED")))
        sys.dont_write_bytecode = bool(environ.get("PYTHONDONTWRITEBYTECODE"))
        os.environ.clear()
        os.environ.update(environ)
        os.chdir(str(request["cwd"]))
        argv = [str(arg) for arg in argv]
        threading.Thread(target=_watch, args=(conn,), daemon=True).start()
        try:
            if argv[0] == "-m":
                sys.argv = argv[1:]  # runpy puts the module's file in sys.argv[0]
                sys.path[:] = [os.getcwd(), *_BASE_PATH]  # as `python -m`
                sys.modules.pop(argv[1], None)  # preloaded: run afresh as __main__
                runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
            else:
                sys.argv = argv
                sys.path[:] = [str(Path(argv[0]).resolve().parent), *_BASE_PATH]
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
        os._exit(code)


def _end_with_parent() -> None:
    """The server ends when the process that started it does (a test run killed outright
    leaves no server behind); its children, each with a client of its own, go on."""
    import ctypes

    pr_set_pdeathsig = 1
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL)
    if os.getppid() == 1:
        os._exit(0)


def serve(path: str, preload: list[str]) -> None:
    _end_with_parent()
    for name in preload:
        importlib.import_module(name)
    # A test server's ``import warm_start`` is a no-op in a child: it is already warm.
    sys.modules["warm_start"] = types.ModuleType("warm_start", "already warm: a forked child")
    signal.signal(signal.SIGCHLD, _reap)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(64)
    print(READY, flush=True)
    while True:
        conn, _ = server.accept()
        fds: list[int] = []
        try:
            request, fds = _read_request(conn)
            why = refusal(conn, request)
        except Exception as exc:  # one bad request never ends the server
            print(f"forkserver: a request failed: {exc!r}", file=sys.stderr, flush=True)
            conn.close()
            for fd in fds:
                os.close(fd)
            continue
        if why is not None:
            with contextlib.suppress(OSError):
                conn.sendall(f"refused {why}\n".encode())
            conn.close()
            for fd in fds:
                os.close(fd)
            continue
        sys.stdout.flush()
        sys.stderr.flush()
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGCHLD})  # register before reaping
        try:
            pid = os.fork()
        except OSError as exc:  # the client is told, and runs the command itself
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGCHLD})
            with contextlib.suppress(OSError):
                conn.sendall(f"refused cannot fork: {exc}\n".encode())
            conn.close()
            for fd in fds:
                os.close(fd)
            continue
        if pid == 0:
            server.close()
            for other in _CHILDREN.values():  # other clients' connections are theirs
                other.close()
            _CHILDREN.clear()
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGCHLD})
            _child(conn, request, fds)
        _CHILDREN[pid] = conn
        with contextlib.suppress(OSError):
            conn.sendall(f"pid {pid}\n".encode())
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGCHLD})
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
    with started(folder / "fork.sock", *preload) as path:
        yield [sys.executable, "-S", str(CLIENT), path]


@contextmanager
def started(socket_path: Path, *preload: str) -> Iterator[str]:
    """The fork server running on ``socket_path`` until the block ends; yields the path."""
    path = str(socket_path)
    proc = subprocess.Popen(
        [sys.executable, __file__, path, *preload], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        deadline = time.monotonic() + 60
        line = proc.stdout.readline()
        if line.strip() != READY or time.monotonic() > deadline:
            raise RuntimeError(f"the fork server did not start (said {line!r})")
        yield path
    finally:
        proc.kill()
        proc.wait(timeout=10)
        if proc.stdout is not None:
            proc.stdout.close()
        with contextlib.suppress(OSError):
            os.unlink(path)


if __name__ == "__main__":
    _BASE_PATH[:] = sys.path[1:]
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repo, for tests.*
    serve(sys.argv[1], sys.argv[2:])
