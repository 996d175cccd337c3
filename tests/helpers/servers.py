"""Where the MCP servers used by tests live (tests/servers/)."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

SERVERS = Path(__file__).resolve().parents[1] / "servers"
TINY = SERVERS / "tiny.py"
TOOLBOX = SERVERS / "toolbox.py"
ASKER = SERVERS / "asker.py"
TASKING = SERVERS / "tasking.py"
PEERS = SERVERS.parent / "peers" / "node_modules"
NODE = PEERS / ".bin" / "node"
EVERYTHING = PEERS / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_port(port: int, proc: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"test server exited early with code {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"test server did not listen on {port} within {timeout} s")


@dataclass
class RunningServer:
    url: str
    port: int
    proc: subprocess.Popen[bytes]


def start_script(
    script: Path, *args: str, path: str = "/mcp", port: int | None = None
) -> RunningServer:
    """Run a server of tests/servers/ on ``port`` (default a free one; ``--port`` is added)
    until it listens (a restarted server gets its old port)."""
    port = free_port() if port is None else port
    proc = subprocess.Popen(
        [sys.executable, str(script), *args, "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_port(port, proc)
    except BaseException:
        proc.kill()
        raise
    return RunningServer(f"http://127.0.0.1:{port}{path}", port, proc)


def start_toolbox(kind: str, *extra: str, port: int | None = None) -> RunningServer:
    return start_script(TOOLBOX, kind, *extra, path="/mcp" if kind == "http" else "/sse", port=port)


def stop_server(server: RunningServer) -> None:
    server.proc.kill()
    server.proc.wait(timeout=10)


def start_tasking(*extra: str) -> RunningServer:
    """tests/servers/tasking.py over Streamable HTTP (it outlives the clients of a test)."""
    return start_script(TASKING, "http", *extra)


@dataclass
class Seen:
    """What a recording server was sent: (method, path, headers) per request."""

    requests: list[tuple[str, str, dict[str, str]]] = field(default_factory=list)


@contextmanager
def recording_server() -> Iterator[tuple[int, Seen]]:
    """An HTTP server on 127.0.0.1 that records each request and answers 502 'via
    recording server' (what reached the wire, headers included)."""
    seen = Seen()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length", "0")))
            seen.requests.append((self.command, self.path, dict(self.headers.items())))
            body = b"via recording server"
            self.send_response(502)
            self.send_header("content-type", "text/plain")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], seen
    finally:
        server.shutdown()
        server.server_close()
