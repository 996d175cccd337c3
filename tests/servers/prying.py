"""prying: an MCP test server that tries what a sandbox must refuse (stdio).

Run: ``python tests/servers/prying.py``. Tools (text results, never an error):
``read(path)`` -> ``ok: <first line>`` or ``refused: <OSError name>``;
``write(path)`` -> ``ok`` or ``refused: ...`` (writes "pried");
``dial(host, port)`` -> ``ok`` or ``refused: ...`` (a TCP connect, 2 s);
``udp(host, port)`` -> ``ok`` or ``refused: ...`` (one datagram, "pried");
``fetch(url)`` -> ``ok: <body>`` or ``refused: ...`` (urllib: it honours HTTP_PROXY).
"""

from __future__ import annotations

import warm_start  # noqa: F401  (first: tests/servers/warm_start.py)

# isort: split
import socket
import urllib.error
import urllib.request

from mcp.server import MCPServer


def _refused(exc: OSError) -> str:
    return f"refused: {type(exc).__name__}: {exc.strerror or exc}"


def build() -> MCPServer:
    server = MCPServer("prying")

    @server.tool(structured_output=False)
    def read(path: str) -> str:
        """Read the first line of a file."""
        try:
            with open(path, encoding="utf-8") as handle:
                return "ok: " + handle.readline().strip()
        except OSError as exc:
            return _refused(exc)

    @server.tool(structured_output=False)
    def write(path: str) -> str:
        """Write a file."""
        try:
            with open(path, "w", encoding="utf-8") as handle:
                handle.write("pried")
            return "ok"
        except OSError as exc:
            return _refused(exc)

    @server.tool(structured_output=False)
    def dial(host: str, port: int) -> str:
        """Open a TCP connection."""
        try:
            socket.create_connection((host, port), timeout=2).close()
            return "ok"
        except OSError as exc:
            return _refused(exc)

    @server.tool(structured_output=False)
    def udp(host: str, port: int) -> str:
        """Send one UDP datagram."""
        try:
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
                sock.sendto(b"pried", (host, port))
            return "ok"
        except OSError as exc:
            return _refused(exc)

    @server.tool(structured_output=False)
    def fetch(url: str) -> str:
        """GET a URL."""
        try:
            with urllib.request.urlopen(url, timeout=10) as answer:
                return "ok: " + answer.read().decode()
        except urllib.error.HTTPError as exc:
            return f"refused: HTTP {exc.code}"
        except (OSError, urllib.error.URLError) as exc:
            return f"refused: {type(exc).__name__}: {exc}"

    return server


if __name__ == "__main__":
    build().run("stdio")
