"""fresh: an MCP test server whose list results say how long they stay fresh (list caching).

Run: ``python tests/servers/fresh.py [--ttl-ms N] [--scope public|private]`` (stdio).
Every cacheable list result carries ``ttlMs = N`` and ``cacheScope`` on 2026 sessions.

Tools (text results): ``echo(text)`` returns ``echo: <text>``.
Prompts: ``greet()``. Resources: ``fresh://note`` ("a note").
"""

from __future__ import annotations

import warm_start  # noqa: F401  (first: tests/servers/warm_start.py)

# isort: split
import argparse

from mcp.server import MCPServer
from mcp.server.caching import CacheHint
from mcp_types.methods import CACHEABLE_METHODS


def build(ttl_ms: int, scope: str) -> MCPServer:
    hint = CacheHint(ttl_ms=ttl_ms, scope="public" if scope == "public" else "private")
    server = MCPServer("fresh", cache_hints={method: hint for method in CACHEABLE_METHODS})

    @server.tool(structured_output=False)
    def echo(text: str) -> str:
        """Echo the text back."""
        return f"echo: {text}"

    @server.prompt()
    def greet() -> str:
        """Say hello."""
        return "hello"

    @server.resource("fresh://note")
    def note() -> str:
        """A note."""
        return "a note"

    return server


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--ttl-ms", type=int, default=0)
    parser.add_argument("--scope", default="private")
    opts = parser.parse_args()
    build(opts.ttl_ms, opts.scope).run("stdio")
