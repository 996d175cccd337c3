"""Files and resources attached to a user message, read once when the message is sent.

An image stays a path (downscaled for the model when a request is built, see
``history.ImageCache``); a text file or a PDF becomes its text, captured in the
attachment so a reopened chat sends the same words. Anything else is refused with a
line naming the file, before anything is stored or sent. Blocking: run in a thread.
"""

from __future__ import annotations

import io
import mimetypes
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from portico.chat.messages import Attachment

if TYPE_CHECKING:
    from portico.runtime.results import ToolResult

MAX_TEXT_BYTES = 512 * 1024  # one attached text file
MAX_IMAGE_BYTES = 20 * 1024 * 1024  # one image before downscaling
MAX_PDF_BYTES = 32 * 1024 * 1024
MAX_PDF_PAGES = 100  # pages read from one PDF (the rest is named as left out)
MAX_PDF_TEXT = 400_000  # characters of text taken from one PDF

_IMAGE_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)


class AttachmentError(ValueError):
    """A file that cannot go with a message; the text names the file and why."""


def size_text(size: int) -> str:
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KiB"
    return f"{size / (1024 * 1024):.1f} MiB"


def describe(attachment: Attachment) -> str:
    """Its type and size as a person reads them ("text/plain, 3.2 KiB"); "" if neither
    is known (an older chat)."""
    size = size_text(attachment.size) if attachment.size else ""
    return ", ".join(x for x in (attachment.mime_type, size) if x)


@dataclass(frozen=True)
class Probe:
    """What a file will be when sent, known before: its type, size and, when it cannot
    go, why (the words the send would refuse it with)."""

    size: int
    mime_type: str
    problem: str = ""


def probe(path: Path) -> Probe:
    """Look at a file the person attached (size and first bytes only). Blocking."""
    try:
        if path.is_dir():
            return Probe(0, "folder", "a folder: attach the files inside it")
        size = path.stat().st_size
        with path.open("rb") as f:
            head = f.read(16)
    except OSError as exc:
        return Probe(0, "", f"cannot be read ({exc.strerror or exc})")
    kind = image_type(head)
    if kind is not None:
        limit, what = MAX_IMAGE_BYTES, "images"
    elif head.startswith(b"%PDF-"):
        kind, limit, what = "application/pdf", MAX_PDF_BYTES, "PDFs"
    else:
        kind, limit, what = _text_type(path), MAX_TEXT_BYTES, "text files"
    if size > limit:
        return Probe(size, kind, f"too big: the limit for {what} is {size_text(limit)}")
    return Probe(size, kind)


def image_type(head: bytes) -> str | None:
    """The image's media type from its first bytes (PNG, JPEG, GIF, WebP), else None."""
    for magic, kind in _IMAGE_MAGIC:
        if head.startswith(magic):
            return kind
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def is_image(attachment: Attachment) -> bool:
    kind = attachment.mime_type or (
        mimetypes.guess_type(attachment.path.name)[0] if attachment.path else None
    )
    # a file, or an image blob of a resource (saved to the image cache)
    return attachment.path is not None and bool(kind and kind.startswith("image/"))


def fenced(name: str, text: str) -> str:
    """``text`` in a Markdown code fence labelled with the file name; the fence is longer
    than any backtick run inside, so the file cannot close it early."""
    longest = run = 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{name}\n{text.rstrip(chr(10))}\n{fence}"


def read(attachment: Attachment) -> Attachment:
    """The attachment ready to store: its text read (text files, PDFs) or its image
    checked. Resources and files read before come back as they are."""
    if attachment.kind != "file" or attachment.text is not None or attachment.path is None:
        return attachment
    path = attachment.path
    name = attachment.name or path.name
    if path.is_dir():
        raise AttachmentError(f"{name}: is a folder; attach the files inside it. Nothing was sent")
    try:
        size = path.stat().st_size
        with path.open("rb") as f:
            head = f.read(16)
    except OSError as exc:
        raise AttachmentError(
            f"{name}: cannot be read ({exc.strerror or exc}); nothing was sent"
        ) from None
    kind = image_type(head)
    if kind is not None:
        _image(path, name, size)
        return replace(attachment, mime_type=kind, size=size)
    if head.startswith(b"%PDF-"):
        return replace(
            attachment, mime_type="application/pdf", size=size, text=_pdf(path, name, size)
        )
    return replace(attachment, mime_type=_text_type(path), size=size, text=_text(path, name, size))


def _image(path: Path, name: str, size: int) -> None:
    from PIL import Image, UnidentifiedImageError

    if size > MAX_IMAGE_BYTES:
        raise AttachmentError(
            f"{name}: {size_text(size)} is over the {size_text(MAX_IMAGE_BYTES)} limit for "
            "images; nothing was sent"
        )
    try:
        with Image.open(path) as image:
            image.load()  # decodes it all: a truncated or corrupt file fails here
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError) as exc:
        raise AttachmentError(
            f"{name}: is not a readable image ({exc}); nothing was sent"
        ) from None


def _text_type(path: Path) -> str:
    guessed = mimetypes.guess_type(path.name)[0]
    return guessed if guessed and guessed.startswith("text/") else "text/plain"


def _text(path: Path, name: str, size: int) -> str:
    data = _read_capped(path, name, size, MAX_TEXT_BYTES, "text files; attach a part of it.")
    if b"\x00" in data[:8192]:
        raise AttachmentError(_binary(name))
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise AttachmentError(_binary(name)) from None


def _binary(name: str) -> str:
    return (
        f"{name}: is a binary file (not text, an image or a PDF), so it cannot go to the "
        "model; nothing was sent"
    )


def _pdf(path: Path, name: str, size: int) -> str:
    return pdf_text(_read_capped(path, name, size, MAX_PDF_BYTES, "PDFs."), name)


def _read_capped(path: Path, name: str, size: int, limit: int, kind: str) -> bytes:
    if size > limit:
        raise AttachmentError(
            f"{name}: {size_text(size)} is over the {size_text(limit)} limit for {kind} "
            "Nothing was sent"
        )
    try:
        return path.read_bytes()
    except OSError as exc:
        raise AttachmentError(
            f"{name}: cannot be read ({exc.strerror or exc}); nothing was sent"
        ) from None


def pdf_text(data: bytes, name: str) -> str:
    """A PDF's text, page by page (at most ``MAX_PDF_PAGES``), through pypdf."""
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            raise AttachmentError(f"{name}: the PDF is encrypted; nothing was sent")
        total = len(reader.pages)
        pages: list[str] = []
        for number, page in enumerate(reader.pages[:MAX_PDF_PAGES], 1):
            words = (page.extract_text() or "").strip()
            if words:
                pages.append(f"--- page {number} ---\n{words}")
    except AttachmentError:
        raise
    except (PyPdfError, OSError, ValueError, KeyError, TypeError) as exc:
        raise AttachmentError(f"{name}: is not a readable PDF ({exc}); nothing was sent") from None
    if not pages:
        raise AttachmentError(
            f"{name}: the PDF has no text to read (a scan? the model would get nothing); "
            "nothing was sent"
        )
    text = "\n\n".join(pages)
    notes = []
    if total > MAX_PDF_PAGES:
        notes.append(f"[only the first {MAX_PDF_PAGES} of {total} pages were read]")
    if len(text) > MAX_PDF_TEXT:
        text = text[:MAX_PDF_TEXT]
        notes.append(f"[the text was cut at {MAX_PDF_TEXT} characters]")
    return "\n\n".join([text, *notes])


def blob_text(data: bytes, mime_type: str | None, name: str) -> str | None:
    """A resource's binary contents as text the model can read (a PDF's text, UTF-8
    text), or None when it is neither."""
    if data.startswith(b"%PDF-") or mime_type == "application/pdf":
        return pdf_text(data, name)
    if b"\x00" in data[:8192]:
        return None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None


def from_resource(
    server: str, uri: str, result: ToolResult, image_dir: Path | None
) -> list[Attachment]:
    """A read resource as attachments, named by their URIs: its text (a PDF's or UTF-8
    blob's too) captured now in one, each image blob saved to ``image_dir`` and attached
    as an image (downscaled per request, to vision models only), any other binary said in
    a line. Blocking (PDF text, image writes): run in a thread."""
    from portico.runtime.results import ResourcePart, is_image_type, save_image

    texts: list[str] = []
    images: list[Attachment] = []
    mime: str | None = None
    size = 0
    for part in result.parts:
        if not isinstance(part, ResourcePart):
            texts.append(part.render())
            continue
        name = part.uri or uri
        if part.text is not None:
            mime = mime or part.mime_type
            texts.append(part.text)
            size += len(part.text.encode())
            continue
        blob = part.blob or b""
        kind = image_type(blob[:16]) if is_image_type(part.mime_type) else None
        if kind is not None and image_dir is not None:
            if len(blob) > MAX_IMAGE_BYTES:
                raise AttachmentError(
                    f"{name}: the image is {size_text(len(blob))}, over the "
                    f"{size_text(MAX_IMAGE_BYTES)} limit for images; nothing was sent"
                )
            try:
                path = save_image(blob, kind, image_dir)
            except OSError as exc:
                raise AttachmentError(
                    f"{name}: the image could not be saved to {image_dir} "
                    f"({exc.strerror or exc}); nothing was sent"
                ) from None
            images.append(
                Attachment(
                    "resource",
                    name,
                    path=path,
                    server=server,
                    uri=name,
                    mime_type=kind,
                    size=len(blob),
                )
            )
            continue
        readable = blob_text(blob, part.mime_type, name)
        mime = mime or part.mime_type
        size += len(blob)
        if readable is None:
            readable = (
                f"[{name} is {size_text(len(blob))} of {part.mime_type or 'binary data'}: "
                "not text, an image or a PDF, so the model gets only this line]"
            )
        texts.append(readable)
    out: list[Attachment] = []
    if texts or not images:
        out.append(
            Attachment(
                "resource",
                uri,
                server=server,
                uri=uri,
                mime_type=mime,
                text="\n".join(texts),
                size=size,
            )
        )
    return out + images
