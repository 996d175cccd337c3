"""The shown path of a conversation as provider-neutral turns (what the model reads)."""

from __future__ import annotations

import asyncio
import mimetypes
from collections.abc import Sequence
from pathlib import Path

from portico.chat.attachments import fenced, is_image
from portico.chat.messages import Message, ToolCall
from portico.chat.providers import images
from portico.chat.providers.wire import (
    AssistantTurn,
    CallRequest,
    CallResult,
    ModelImage,
    ResultsTurn,
    Turn,
    UserTurn,
)

MAX_ATTACHED_TEXT = 400_000  # characters of one attachment (the read caps it first)


class ImageCache:
    """Prepared (downscaled) images by path, read off the loop once."""

    def __init__(self) -> None:
        self._cache: dict[Path, ModelImage | None] = {}

    async def get(self, path: Path, mime_type: str | None = None) -> ModelImage | None:
        if path in self._cache:
            return self._cache[path]
        kind = mime_type or mimetypes.guess_type(path.name)[0] or "image/png"

        def read() -> ModelImage | None:
            try:
                return images.prepare(path.read_bytes(), kind)
            except OSError:
                return None

        image = await asyncio.to_thread(read)
        self._cache[path] = image
        return image


async def _user_turn(message: Message, vision: bool, cache: ImageCache) -> UserTurn:
    parts = [message.text] if message.text else []
    pictures: list[ModelImage] = []
    for a in message.attachments:
        if a.path is not None and is_image(a):
            image = await cache.get(a.path, a.mime_type) if vision else None
            what = f"resource {a.uri} from server {a.server}" if a.kind == "resource" else a.name
            if image is not None:
                pictures.append(image)
                if a.kind == "resource":  # the model is told where the picture came from
                    parts.append(f"[Attached image: {what}]")
            else:  # an older chat, or its model changed since: say what was there
                parts.append(f"[Attached image {what}: not shown, this model takes no images]")
        elif a.kind == "resource":
            label = f"Attached resource {a.uri} from server {a.server}"
            parts.append(f"[{label}]\n{fenced(a.name, a.text or '')}")
        elif a.text is not None:
            parts.append(f"[Attached file {a.name}]\n{fenced(a.name, a.text[:MAX_ATTACHED_TEXT])}")
        else:
            parts.append(f"[Attached file {a.name}: it could not be read]")
    return UserTurn("\n\n".join(parts), tuple(pictures))


async def _result(call: ToolCall, vision: bool, cache: ImageCache) -> CallResult:
    pictures: list[ModelImage] = []
    if vision:
        for path in call.result_images[: images.MAX_PER_RESULT]:
            image = await cache.get(path)
            if image is not None:
                pictures.append(image)
    text = call.result_text
    if call.outcome is None:
        text = "The call was interrupted before it returned."
    return CallResult(call.id, call.name, text, tuple(pictures), call.is_error)


async def to_turns(path: Sequence[Message], vision: bool, cache: ImageCache) -> list[Turn]:
    turns: list[Turn] = []
    for message in path:
        if message.role == "user":
            turns.append(await _user_turn(message, vision, cache))
            continue
        if message.status == "failed" and not message.text and not message.tool_calls:
            continue
        calls = {c.id: c for c in message.tool_calls}
        rounds = message.rounds
        if not rounds:
            if message.text:
                turns.append(AssistantTurn(message.text))
            continue
        for round_ in rounds:
            made = [calls[i] for i in round_.tool_call_ids if i in calls]
            requests = tuple(CallRequest(c.id, c.name, c.arguments, c.raw_arguments) for c in made)
            if not round_.text and not requests and not round_.native:
                continue
            native = tuple(round_.native)
            turns.append(AssistantTurn(round_.text, requests, native, round_.native_kind))
            if made:
                turns.append(ResultsTurn(tuple([await _result(c, vision, cache) for c in made])))
    return turns
