"""The command a peer runs instead of ``python SCRIPT ARGS`` (or ``python -m MODULE ARGS``):
hands its arguments, environment, working folder and standard streams to the fork server
(forkserver.py), passes on the signals it gets, and ends as the forked child ended (its
exit code, or its signal). A refused request (see forkserver.py), or no server at the
socket, runs the command here instead, by ``exec`` of a plain ``python``. Standard library
only, started with ``python -S``; ``tests/servers/warm_start.py`` uses :func:`hand_off`."""

import contextlib
import json
import os
import signal
import socket
import struct
import sys

FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def hand_off(path: str, argv: list[str]) -> int | None:
    """Run ``python *argv`` as a child of the fork server at ``path``: its exit code
    (a child killed by a signal kills this process with the same signal), or None when
    the server refused or is not there."""
    request = json.dumps({"argv": argv, "env": dict(os.environ), "cwd": os.getcwd()}).encode()
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(path)
        socket.send_fds(conn, [struct.pack("!I", len(request))], [0, 1, 2])
        conn.sendall(request)
        reader = conn.makefile("rb")
        first = reader.readline().decode()
    except OSError:
        conn.close()
        return None
    if not first.startswith("pid "):
        reader.close()
        conn.close()
        return None  # refused: the caller runs it itself
    child = int(first.split()[1])

    def pass_on(signum: int, frame: object) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signum)

    for signum in FORWARDED:
        signal.signal(signum, pass_on)
    try:
        last = reader.readline().decode().split()
    except OSError:
        last = []
    reader.close()
    conn.close()
    if len(last) == 2 and last[0] == "signal":
        signum = int(last[1])
        if signum in FORWARDED:
            signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
    if len(last) == 2 and last[0] == "exit":
        return int(last[1])
    print("forkclient: the forked child ended without an exit status", file=sys.stderr)
    return 1


def main() -> int:
    path, *argv = sys.argv[1:]
    code = hand_off(path, argv)
    if code is None:
        os.execv(sys.executable, [sys.executable, *argv])
    return code


if __name__ == "__main__":
    raise SystemExit(main())
