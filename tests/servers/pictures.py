"""pictures: a stdio MCP server whose resources and results hold images (the chat's ``@``
resources and images in the transcript).

Run: ``python tests/servers/pictures.py``

Tools:
  snapshot()   an embedded image resource (pictures://snapshot.png, a 12x6 green PNG)
               and the text "a green snapshot"
Resources: pictures://notes.txt (text), pictures://logo.png (a 40x20 blue PNG blob),
pictures://data.bin (8 bytes of binary), template pictures://items/{item_id}.
"""

from __future__ import annotations

import warm_start  # noqa: F401  (first: tests/servers/warm_start.py)

# isort: split
import base64
import sys
from pathlib import Path

from mcp.server import MCPServer
from mcp_types import BlobResourceContents, EmbeddedResource, TextContent

sys.path.insert(0, str(Path(__file__).parent))
from showcase import png

NOTES = "pictures notes: the first line\nthe second line"
LOGO_PNG = png(40, 20, (30, 30, 220))
SNAPSHOT_PNG = png(12, 6, (30, 200, 30))
DATA = bytes(range(250, 256)) + b"\x00\x01"


def build() -> MCPServer:
    server = MCPServer("pictures")

    @server.tool()
    def snapshot() -> list[EmbeddedResource | TextContent]:
        """Take a snapshot (an image, as an embedded resource)."""
        blob = BlobResourceContents(
            uri="pictures://snapshot.png",
            mime_type="image/png",
            blob=base64.b64encode(SNAPSHOT_PNG).decode(),
        )
        return [
            EmbeddedResource(type="resource", resource=blob),
            TextContent(type="text", text="a green snapshot"),
        ]

    @server.resource("pictures://notes.txt", name="notes", mime_type="text/plain")
    def notes() -> str:
        """Plain notes."""
        return NOTES

    @server.resource("pictures://logo.png", name="logo", mime_type="image/png")
    def logo() -> bytes:
        """A blue banner."""
        return LOGO_PNG

    @server.resource("pictures://data.bin", name="data", mime_type="application/octet-stream")
    def data() -> bytes:
        """Some binary data."""
        return DATA

    @server.resource("pictures://items/{item_id}", name="item", mime_type="text/plain")
    def item(item_id: str) -> str:
        """One item by id."""
        return f"item {item_id}"

    return server


if __name__ == "__main__":
    build().run("stdio")
