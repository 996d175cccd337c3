"""The command a peer runs instead of ``python SCRIPT ARGS``: hands its arguments,
environment, working folder and standard streams to the fork server (forkserver.py) and
exits with the forked child's code. Standard library only, started with ``python -S``."""

import json
import os
import socket
import struct
import sys


def main() -> int:
    path, *argv = sys.argv[1:]
    request = json.dumps({"argv": argv, "env": dict(os.environ), "cwd": os.getcwd()}).encode()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.connect(path)
        socket.send_fds(conn, [struct.pack("!I", len(request))], [0, 1, 2])
        conn.sendall(request)
        answer = b""
        while chunk := conn.recv(16):
            answer += chunk
    if not answer:
        print("forkclient: the forked child ended without an exit code", file=sys.stderr)
        return 1
    return int(answer)


if __name__ == "__main__":
    raise SystemExit(main())
