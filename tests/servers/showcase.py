"""showcase: a stdio MCP server for the desktop app's server pages (tools, prompts, resources).

Run: ``python tests/servers/showcase.py``

Tools:
  lookup(query, limit=5)   read-only + idempotent -> text "found <limit> for <query>"
  delete_item(item_id)     destructive -> text "deleted <item_id>"
  chart()                  one valid 16x8 PNG (red) + text "a red chart"
  stats()                  structured output {"count": 3, "mean": 1.5}
  tagged(tags, options)    array + object parameters -> text of both as JSON
  secret()                 (tests filter it out)
Prompts: review(code, language="python").
Resources: showcase://notes (text), showcase://logo.png (PNG blob),
template showcase://items/{item_id}.
"""

from __future__ import annotations

import warm_start  # noqa: F401  (first: tests/servers/warm_start.py)

# isort: split
import json
import struct
import zlib
from typing import Any

from mcp.server import MCPServer
from mcp_types import ImageContent, TextContent, ToolAnnotations

NOTES_TEXT = "showcase notes: line one\nline two"


def png(width: int, height: int, rgb: tuple[int, int, int]) -> bytes:
    """A valid RGB PNG of one colour (checksums computed, unlike hand-written bytes)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    row = b"\x00" + bytes(rgb) * width
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(row * height))
        + chunk(b"IEND", b"")
    )


CHART_PNG = png(16, 8, (220, 30, 30))
LOGO_PNG = png(8, 8, (30, 30, 220))


def build() -> MCPServer:
    import base64

    server = MCPServer("showcase", instructions="Tools, prompts and resources for the app.")

    @server.tool(
        structured_output=False,
        annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=True),
    )
    def lookup(query: str, limit: int = 5) -> str:
        """Look items up by a query.

        Returns at most `limit` matches."""
        return f"found {limit} for {query}"

    @server.tool(structured_output=False, annotations=ToolAnnotations(destructive_hint=True))
    def delete_item(item_id: str) -> str:
        """Delete an item for good."""
        return f"deleted {item_id}"

    @server.tool()
    def chart() -> list[ImageContent | TextContent]:
        """Draw a small chart."""
        data = base64.b64encode(CHART_PNG).decode()
        return [
            ImageContent(type="image", data=data, mime_type="image/png"),
            TextContent(type="text", text="a red chart"),
        ]

    @server.tool()
    def stats() -> dict[str, Any]:
        """Numbers about the items."""
        return {"count": 3, "mean": 1.5}

    @server.tool(structured_output=False)
    def tagged(tags: list[str], options: dict[str, int] | None = None) -> str:
        """Echo a list and an object."""
        return json.dumps({"tags": tags, "options": options})

    @server.tool(structured_output=False)
    def secret() -> str:
        """Something the config hides."""
        return "hidden"

    @server.prompt()
    def review(code: str, language: str = "python") -> str:
        """Ask for a code review."""
        return f"Please review this {language} code: {code}"

    @server.resource("showcase://notes", mime_type="text/plain")
    def notes() -> str:
        """Plain notes."""
        return NOTES_TEXT

    @server.resource("showcase://logo.png", mime_type="image/png")
    def logo() -> bytes:
        """A blue square."""
        return LOGO_PNG

    @server.resource("showcase://items/{item_id}", mime_type="text/plain")
    def item(item_id: str) -> str:
        """One item by id."""
        return f"item {item_id}"

    return server


if __name__ == "__main__":
    build().run("stdio")
