"""CardState from the chat core's data: a stored ToolCall, or the live call events."""

from __future__ import annotations

import json
import re
from pathlib import Path

from portico.chat.events import ToolCallFinished, ToolCallStarted
from portico.chat.messages import ToolCall
from portico.runtime.results import ImagePart, ResourceLinkPart, ResourcePart, TextPart, ToolResult
from portico.ui.chat.tool_card import CardState

_MEDIA = re.compile(r"^MEDIA:(.+)$", re.MULTILINE)
_LINK = re.compile(r"^\[resource link (.+?) <([^>]+)>(?::.*)?\]$", re.MULTILINE)
# an embedded image resource's line before its MEDIA: line (the card shows the image)
_IMAGE_RESOURCE = re.compile(r"^\[resource \S+ \(image/[^,()]+, \d+ bytes\)\]$", re.MULTILINE)


def split_name(qualified: str) -> tuple[str, str]:
    server, sep, tool = qualified.partition("__")
    return (server, tool) if sep else ("", qualified)


def from_started(event: ToolCallStarted) -> CardState:
    return CardState(
        id=event.id,
        server=event.server,
        tool=event.tool,
        qualified_name=event.qualified_name,
        arguments=dict(event.arguments),
        raw_arguments=event.raw_arguments,
    )


def apply_finished(state: CardState, event: ToolCallFinished) -> CardState:
    state.outcome = event.outcome
    state.duration = event.duration
    state.error = event.error or ""
    result = event.result
    if result is not None:
        state.is_error = result.is_error
        texts: list[str] = []
        for part in result.parts:
            if isinstance(part, TextPart):
                texts.append(part.text)
            elif isinstance(part, ImagePart):
                state.images.append((part.path.name if part.path else "image", part.data))
            elif isinstance(part, ResourceLinkPart):
                state.links.append((part.title or part.name, part.uri))
            elif isinstance(part, ResourcePart) and part.blob and part.path is not None:
                state.images.append((part.uri, part.blob))
            elif isinstance(part, ResourcePart):
                texts.append(part.render())
            else:
                texts.append(part.render())
        state.text = "\n".join(t for t in texts if t)
    return state


def from_stored(call: ToolCall) -> CardState:
    """A call of a stored message (a resumed chat): images come back from their files."""
    server, tool = split_name(call.name)
    text = call.result_text
    links = [(m.group(1), m.group(2)) for m in _LINK.finditer(text)]
    text = _MEDIA.sub("", _IMAGE_RESOURCE.sub("", _LINK.sub("", text))).strip()
    paths = list(call.result_images) or [
        Path(m.group(1)) for m in _MEDIA.finditer(call.result_text)
    ]
    outcome = call.outcome or "cancelled"  # a call that never ended (the app was closed)
    error = text if outcome not in ("ok",) else ""
    return CardState(
        id=call.id,
        server=server,
        tool=tool,
        qualified_name=call.name,
        arguments=dict(call.arguments),
        raw_arguments=call.raw_arguments,
        outcome=outcome,
        text=text if outcome == "ok" else "",
        image_paths=[Path(p) for p in paths],
        links=links,
        is_error=call.is_error,
        error=error,
        duration=call.duration,
        view_uri=call.view_uri,
    )


def stored_result(text: str) -> ToolResult:
    """A stored call's result for its view, reopened: its text, and that text as the
    structured content when it is a JSON object (a tool returning structured content
    sends it serialized as its text too, and the store keeps only the text)."""
    try:
        structured = json.loads(text) if text.lstrip().startswith("{") else None
    except ValueError:
        structured = None
    return ToolResult(
        parts=(TextPart(text),), structured=structured if isinstance(structured, dict) else None
    )
