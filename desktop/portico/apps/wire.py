"""A processed tool result back in the MCP ``CallToolResult`` shape a view expects."""

from __future__ import annotations

import base64
from typing import Any

from portico.runtime.results import (
    AudioPart,
    ImagePart,
    ResourceLinkPart,
    ResourcePart,
    TextPart,
    ToolResult,
)


def call_tool_result(result: ToolResult) -> dict[str, Any]:
    """``content`` (text, image and audio with their data, resources, links),
    ``structuredContent``, ``isError`` and ``_meta``, camel-cased as on the wire."""
    content: list[dict[str, Any]] = []
    for part in result.parts:
        block: dict[str, Any]
        if isinstance(part, TextPart):
            block = {"type": "text", "text": part.text}
        elif isinstance(part, ImagePart | AudioPart):
            block = {
                "type": part.kind,
                "data": base64.b64encode(part.data).decode("ascii"),
                "mimeType": part.mime_type,
            }
        elif isinstance(part, ResourcePart):
            inner: dict[str, Any] = {"uri": part.uri}
            if part.mime_type:
                inner["mimeType"] = part.mime_type
            if part.blob is not None:
                inner["blob"] = base64.b64encode(part.blob).decode("ascii")
            else:
                inner["text"] = part.text or ""
            block = {"type": "resource", "resource": inner}
        else:
            assert isinstance(part, ResourceLinkPart)
            block = {"type": "resource_link", "uri": part.uri, "name": part.name}
            for key, value in (
                ("title", part.title),
                ("description", part.description),
                ("mimeType", part.mime_type),
                ("size", part.size),
            ):
                if value is not None:
                    block[key] = value
        if part.meta:
            block["_meta"] = part.meta
        content.append(block)
    out: dict[str, Any] = {"content": content, "isError": result.is_error}
    if result.structured is not None:
        out["structuredContent"] = result.structured
    if result.meta:
        out["_meta"] = result.meta
    return out
