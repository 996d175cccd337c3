"""Files attached to a user message, read once when the message is sent.

An image stays a path (downscaled for the model when a request is built, see
``history.ImageCache``); a text file or a PDF becomes its text, captured in the
attachment so a reopened chat sends the same words. Anything else is refused with a
line naming the file, before anything is stored or sent. Blocking: run in a thread.
"""

from __future__ import annotations

import io
import mimetypes
from dataclasses import replace
from pathlib import Path

from portico.chat.messages import Attachment

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
    return attachment.kind == "file" and bool(kind and kind.startswith("image/"))


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
