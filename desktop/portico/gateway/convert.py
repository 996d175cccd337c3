"""Portico's processed results and registered tools, back in MCP's wire types.

A tool result reaches a client as Portico processed it (TAG characters stripped,
reserved ``_meta`` keys dropped), so a client sees what the chat would see; images and
audio keep their bytes.
"""

from __future__ import annotations

import base64
from typing import Any

import mcp_types as types

from portico.runtime.registry import ModelTool, RegisteredTool
from portico.runtime.results import (
    AudioPart,
    ImagePart,
    Part,
    ResourceLinkPart,
    ResourcePart,
    TextPart,
    ToolResult,
)


def tool(t: RegisteredTool) -> types.Tool:
    annotations = types.ToolAnnotations.model_validate(t.annotations) if t.annotations else None
    return types.Tool(
        name=t.qualified,
        title=t.title,
        description=t.description,
        input_schema=t.input_schema,
        output_schema=t.output_schema,
        annotations=annotations,
    )


def model_tool(t: ModelTool) -> types.Tool:
    """A tool Portico itself offers (``tool_search``)."""
    return types.Tool(name=t.name, description=t.description, input_schema=t.input_schema)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def block(part: Part) -> Any:
    meta = part.meta or None
    if isinstance(part, TextPart):
        return types.TextContent(type="text", text=part.text, _meta=meta)
    if isinstance(part, ImagePart):
        return types.ImageContent(
            type="image", data=_b64(part.data), mime_type=part.mime_type, _meta=meta
        )
    if isinstance(part, AudioPart):
        return types.AudioContent(
            type="audio", data=_b64(part.data), mime_type=part.mime_type, _meta=meta
        )
    if isinstance(part, ResourcePart):
        contents: Any
        if part.blob is not None:
            contents = types.BlobResourceContents(
                uri=part.uri, mime_type=part.mime_type, blob=_b64(part.blob)
            )
        else:
            contents = types.TextResourceContents(
                uri=part.uri, mime_type=part.mime_type, text=part.text or ""
            )
        return types.EmbeddedResource(type="resource", resource=contents, _meta=meta)
    assert isinstance(part, ResourceLinkPart)
    return types.ResourceLink(
        type="resource_link",
        uri=part.uri,
        name=part.name,
        title=part.title,
        description=part.description,
        mime_type=part.mime_type,
        size=part.size,
        _meta=meta,
    )


def call_result(result: ToolResult) -> types.CallToolResult:
    structured = result.structured if isinstance(result.structured, dict) else None
    return types.CallToolResult(
        content=[block(p) for p in result.parts],
        structured_content=structured,
        is_error=result.is_error,
        _meta=result.meta,
    )


def error_result(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)
