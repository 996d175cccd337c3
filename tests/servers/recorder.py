"""recorder: an MCP server over Streamable HTTP that writes down everything it receives.

Run: ``python tests/servers/recorder.py --port N --log FILE`` (endpoint ``/mcp``, on
127.0.0.1). Every HTTP request is appended to FILE as one JSON line: method, path, query
and all headers, before the MCP app sees it. The attack tests read the log to prove a
secret never arrived.

Tools: ``echo(text)`` (read-only) and ``write_note(text)`` (writes: not read-only), so a
test can tell "ran without asking" from "asked first".
"""

from __future__ import annotations

import warm_start  # noqa: F401  (first: tests/servers/warm_start.py)

# isort: split
import argparse
import json
from pathlib import Path
from typing import Any

from mcp.server import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types import ToolAnnotations


def build() -> MCPServer:
    server = MCPServer("recorder")

    @server.tool(structured_output=False, annotations=ToolAnnotations(read_only_hint=True))
    def echo(text: str) -> str:
        """Echo the text back."""
        return f"echo: {text}"

    @server.tool(
        structured_output=False,
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True),
    )
    def write_note(text: str) -> str:
        """Write a note (a tool that changes things)."""
        return f"wrote: {text}"

    return server


class Recording:
    def __init__(self, inner: Any, log: Path) -> None:
        self.inner = inner
        self.log = log

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            entry = {
                "method": scope.get("method"),
                "path": scope.get("path"),
                "query": (scope.get("query_string") or b"").decode("latin-1"),
                "headers": [
                    [k.decode("latin-1"), v.decode("latin-1")] for k, v in scope["headers"]
                ],
            }
            with self.log.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(entry) + "\n")
        await self.inner(scope, receive, send)


def main() -> None:
    import uvicorn

    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--log", type=Path, required=True)
    opts = parser.parse_args()
    app = build().streamable_http_app(
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False)
    )
    uvicorn.run(Recording(app, opts.log), host="127.0.0.1", port=opts.port, log_level="warning")


if __name__ == "__main__":
    main()
