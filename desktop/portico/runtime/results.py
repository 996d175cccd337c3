"""What a tool result looks like after Portico processed it, before anyone sees it.

- Unicode TAG characters (U+E0000..U+E007F, invisible, a known prompt-injection carrier)
  are stripped from text, resource contents and tool descriptions; valid emoji tag
  sequences (U+1F3F4 + tag characters + U+E007F CANCEL TAG, the subdivision flags) stay.
- ``_meta`` keeps everything but keys under a protocol-reserved prefix, and is dropped
  when nothing remains.
- Images are written to the image cache and shown as ``MEDIA:/path``; the bytes stay on
  the part for a vision model.
- Embedded resources and resource links stay structured parts.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import functools
import hashlib
import os
import re
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp.types import CallToolResult, GetPromptResult, ReadResourceResult

# A valid tag sequence: black flag, one or more tag specs, cancel tag. Anything else in
# the TAG block is removed.
_TAGS = re.compile("(\U0001f3f4[\U000e0020-\U000e007e]+\U000e007f)|[\U000e0000-\U000e007f]")
_ANY_TAG = re.compile("[\U000e0000-\U000e007f]")


def _keep_flag(m: re.Match[str]) -> str:
    return m.group(1) or ""


def strip_tags(text: str) -> str:
    if not _ANY_TAG.search(text):
        return text
    return _TAGS.sub(_keep_flag, text)


def strip_tags_deep(value: Any) -> Any:
    """Strip TAG characters from every string (and key) in a JSON-like value."""
    if isinstance(value, str):
        return strip_tags(value)
    if isinstance(value, list):
        return [strip_tags_deep(v) for v in value]
    if isinstance(value, dict):
        return {strip_tags(str(k)): strip_tags_deep(v) for k, v in value.items()}
    return value


# --- _meta -------------------------------------------------------------------------

_RESERVED_LABELS = frozenset({"modelcontextprotocol", "mcp"})


@functools.lru_cache(maxsize=1024)  # the same few keys come back on every reply
def is_reserved_meta_key(key: str) -> bool:
    """True for keys whose prefix MCP reserves.

    Both spec wordings are honoured: a ``modelcontextprotocol`` / ``mcp`` label followed
    by another label (``modelcontextprotocol.io/``, ``tools.mcp.com/``), and, from
    2025-11-25 on, any prefix whose second label is one of them (``io.modelcontextprotocol/``,
    ``dev.mcp/``). ``com.example.mcp/`` is reserved by neither.
    """
    slash = key.find("/")
    if slash <= 0:
        return False
    labels = key[:slash].lower().split(".")
    if any(label in _RESERVED_LABELS for label in labels[:-1]):
        return True
    return len(labels) >= 2 and labels[1] in _RESERVED_LABELS


def filter_meta(meta: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if not meta:
        return None
    kept = {k: v for k, v in meta.items() if not is_reserved_meta_key(k)}
    return kept or None


# --- parts -------------------------------------------------------------------------


@dataclass(frozen=True)
class TextPart:
    text: str
    meta: dict[str, Any] | None = None
    kind: str = "text"

    def render(self) -> str:
        return self.text


@dataclass(frozen=True)
class ImagePart:
    path: Path | None  # None: the file could not be written; ``data`` still holds it
    mime_type: str
    data: bytes = field(repr=False)
    meta: dict[str, Any] | None = None
    kind: str = "image"
    note: str | None = None  # why it was not saved (shown in the text instead of a path)

    @property
    def marker(self) -> str:
        if self.path is None:
            return f"[image {self.mime_type}, {len(self.data)} bytes: {self.note or 'not saved'}]"
        return f"MEDIA:{self.path}"

    def render(self) -> str:
        return self.marker


@dataclass(frozen=True)
class AudioPart:
    mime_type: str
    data: bytes = field(repr=False)
    meta: dict[str, Any] | None = None
    kind: str = "audio"

    def render(self) -> str:
        return f"[audio {self.mime_type}, {len(self.data)} bytes]"


@dataclass(frozen=True)
class ResourcePart:
    """An embedded resource (contents included). An image blob in a tool result is also
    written to the image cache (``path``), so the chat shows it and a vision model sees
    it as it does an image block."""

    uri: str
    mime_type: str | None
    text: str | None = None
    blob: bytes | None = field(default=None, repr=False)
    meta: dict[str, Any] | None = None
    kind: str = "resource"
    path: Path | None = None  # an image blob, saved

    def render(self) -> str:
        if self.text is not None:
            return f"[resource {self.uri}]\n{self.text}"
        size = len(self.blob or b"")
        line = f"[resource {self.uri} ({self.mime_type or 'binary'}, {size} bytes)]"
        return f"{line}\nMEDIA:{self.path}" if self.path is not None else line


@dataclass(frozen=True)
class ResourceLinkPart:
    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    meta: dict[str, Any] | None = None
    kind: str = "resource_link"

    def render(self) -> str:
        label = self.title or self.name
        extra = f": {self.description}" if self.description else ""
        return f"[resource link {label} <{self.uri}>{extra}]"


Part = TextPart | ImagePart | AudioPart | ResourcePart | ResourceLinkPart


@dataclass(frozen=True)
class ToolResult:
    parts: tuple[Part, ...]
    is_error: bool = False
    structured: Any = None
    meta: dict[str, Any] | None = None

    def text(self) -> str:
        """The model-facing text: parts joined, images as ``MEDIA:/path``."""
        return "\n".join(p.render() for p in self.parts)

    @property
    def images(self) -> list[ImagePart]:
        return [p for p in self.parts if isinstance(p, ImagePart)]

    @property
    def image_paths(self) -> tuple[Path, ...]:
        """Every saved image: image blocks and embedded image resources."""
        return tuple(
            p.path for p in self.parts if isinstance(p, ImagePart | ResourcePart) and p.path
        )

    def to_json(self) -> dict[str, Any]:
        parts: list[dict[str, Any]] = []
        for p in self.parts:
            d: dict[str, Any] = {"type": p.kind}
            if isinstance(p, TextPart):
                d["text"] = p.text
            elif isinstance(p, ImagePart):
                d.update(
                    path=str(p.path) if p.path is not None else None,
                    mime_type=p.mime_type,
                    marker=p.marker,
                )
                if p.note:
                    d["note"] = p.note
            elif isinstance(p, AudioPart):
                d.update(mime_type=p.mime_type, size=len(p.data))
            elif isinstance(p, ResourcePart):
                d.update(uri=p.uri, mime_type=p.mime_type, text=p.text)
                if p.blob is not None:
                    d["size"] = len(p.blob)
            else:
                d.update(
                    uri=p.uri,
                    name=p.name,
                    title=p.title,
                    description=p.description,
                    mime_type=p.mime_type,
                    size=p.size,
                )
            if p.meta:
                d["_meta"] = p.meta
            parts.append(d)
        out: dict[str, Any] = {"content": parts, "is_error": self.is_error}
        if self.structured is not None:
            out["structured_content"] = self.structured
        if self.meta:
            out["_meta"] = self.meta
        return out


_EXT = {
    "image/png": ".png",
    "image/jpeg": ".jpg",
    "image/jpg": ".jpg",
    "image/gif": ".gif",
    "image/webp": ".webp",
    "image/svg+xml": ".svg",
    "image/bmp": ".bmp",
}


def save_image(data: bytes, mime_type: str, image_dir: Path) -> Path:
    """Content-addressed: the same image is written once. Raises OSError."""
    ext = _EXT.get(mime_type.lower(), ".bin")
    path = image_dir / f"{hashlib.sha256(data).hexdigest()[:32]}{ext}"
    if not path.exists():
        image_dir.mkdir(parents=True, exist_ok=True)
        # a unique temp name: two identical images saved at once must not share one
        fd, tmp = tempfile.mkstemp(dir=image_dir, prefix=".tmp-", suffix=ext)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    return path


def _image_part(
    data: bytes, mime_type: str, image_dir: ImageDir, meta: dict[str, Any] | None
) -> ImagePart:
    """Save the image; a failed write keeps the bytes and says why instead of raising
    (the tool already ran: losing its result over a full disk would be worse)."""
    folder: Path | None = None
    try:
        folder = image_dir() if callable(image_dir) else image_dir
        return ImagePart(save_image(data, mime_type, folder), mime_type, data, meta)
    except OSError as exc:
        where = f" to {folder}" if folder is not None else ""
        reason = exc.strerror or str(exc)
        note = f"not saved{where} ({reason}); check that the folder is writable and has space"
        return ImagePart(None, mime_type, data, meta, note=note)


def _b64(data: str) -> bytes | None:
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None


def _resource_part(
    res: Any, meta: dict[str, Any] | None, image_dir: ImageDir | None = None
) -> ResourcePart:
    text = getattr(res, "text", None)
    blob_b64 = getattr(res, "blob", None)
    blob = _b64(blob_b64) if isinstance(blob_b64, str) else None
    mime = getattr(res, "mime_type", None)
    path = None
    if blob is not None and image_dir is not None and is_image_type(mime):
        assert mime is not None
        path = _image_part(blob, mime, image_dir, None).path
    return ResourcePart(
        uri=str(res.uri),
        mime_type=mime,
        text=strip_tags(text) if isinstance(text, str) else None,
        blob=blob,
        meta=meta,
        path=path,
    )


def is_image_type(mime_type: str | None) -> bool:
    """An image type the chat shows and a vision model takes (not SVG: it is code)."""
    kind = (mime_type or "").lower()
    return kind in _EXT and kind != "image/svg+xml"


ImageDir = Path | Callable[[], Path]  # a callable is only asked when an image arrives


def process_block(block: Any, image_dir: ImageDir) -> Part:
    """One MCP content block -> one processed part."""
    kind = getattr(block, "type", None)
    meta = filter_meta(getattr(block, "meta", None))
    if kind == "text":
        return TextPart(strip_tags(block.text), meta)
    if kind == "image":
        data = _b64(block.data)
        if data is None:
            return TextPart(f"[image {block.mime_type}: invalid base64 data, not shown]", meta)
        return _image_part(data, block.mime_type, image_dir, meta)
    if kind == "audio":
        data = _b64(block.data) or b""
        return AudioPart(block.mime_type, data, meta)
    if kind == "resource":
        return _resource_part(block.resource, meta, image_dir)
    if kind == "resource_link":
        return ResourceLinkPart(
            uri=str(block.uri),
            name=strip_tags(block.name),
            title=strip_tags(block.title) if block.title else None,
            description=strip_tags(block.description) if block.description else None,
            mime_type=block.mime_type,
            size=block.size,
            meta=meta,
        )
    return TextPart(f"[unsupported content type {kind!r}]", meta)


def process_result(result: CallToolResult, image_dir: ImageDir) -> ToolResult:
    parts = tuple([process_block(b, image_dir) for b in result.content])
    structured = result.structured_content
    return ToolResult(
        parts=parts,
        is_error=bool(result.is_error),
        structured=strip_tags_deep(structured) if structured is not None else None,
        meta=filter_meta(result.meta),
    )


async def aprocess_result(result: CallToolResult, image_dir: ImageDir) -> ToolResult:
    """``process_result``; a result with images is processed in a worker thread (the
    images are written to disk), any other right here (no thread hop per call)."""
    if any(_has_image(block) for block in result.content):
        return await asyncio.to_thread(process_result, result, image_dir)
    return process_result(result, image_dir)


def _has_image(block: Any) -> bool:
    kind = getattr(block, "type", None)
    if kind == "image":
        return True
    resource = getattr(block, "resource", None) if kind == "resource" else None
    return resource is not None and is_image_type(getattr(resource, "mime_type", None))


def process_resource(result: ReadResourceResult) -> ToolResult:
    parts = tuple(_resource_part(c, filter_meta(getattr(c, "meta", None))) for c in result.contents)
    return ToolResult(parts=parts, meta=filter_meta(result.meta))


def process_prompt(result: GetPromptResult, image_dir: ImageDir) -> ToolResult:
    parts: list[Part] = []
    if result.description:
        parts.append(TextPart(strip_tags(result.description)))
    for message in result.messages:
        part = process_block(message.content, image_dir)
        if isinstance(part, TextPart):
            part = TextPart(f"[{message.role}] {part.text}", part.meta)
        parts.append(part)
    return ToolResult(parts=tuple(parts), meta=filter_meta(result.meta))


async def aprocess_prompt(result: GetPromptResult, image_dir: ImageDir) -> ToolResult:
    """``process_prompt``; with images, in a worker thread (see ``aprocess_result``)."""
    if not any(getattr(m.content, "type", None) == "image" for m in result.messages):
        return process_prompt(result, image_dir)
    return await asyncio.to_thread(process_prompt, result, image_dir)
