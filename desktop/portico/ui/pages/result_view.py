"""Shows a processed result (tool call, prompt, resource read): text, images, structured
content and errors, in one selectable view. Images are decoded from the bytes the
runtime copied across (never re-read from disk)."""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtCore import QUrl
from PySide6.QtGui import QImage, QTextDocument
from PySide6.QtWidgets import QTextBrowser, QWidget

from portico.ui.pages.common import esc

MAX_IMAGE_WIDTH = 480
MIN_IMAGE_WIDTH = 48  # tiny icons are scaled up to be seen
MAX_TEXT = 2_000_000  # characters shown; the rest is cut with a note


class ResultView(QTextBrowser):
    def __init__(self, name: str = "result", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setOpenLinks(False)
        self.setAccessibleName(name)
        self.images: list[QImage] = []
        self.is_error = False
        self._serial = 0
        self.setPlaceholderText("The result appears here.")

    def show_message(self, text: str, *, error: bool = False) -> None:
        self.images = []
        self.is_error = error
        color = "#b00020" if error else "gray"
        self.setHtml(f"<p style='color:{color}; white-space:pre-wrap'>{esc(text)}</p>")

    def show_result(self, result: Any, heading: str = "") -> None:
        """``result`` is a ``portico.runtime.results.ToolResult``."""
        self.images = []
        self._serial += 1
        self.is_error = bool(getattr(result, "is_error", False))
        html: list[str] = []
        if heading:
            html.append(f"<p><b>{esc(heading)}</b></p>")
        if self.is_error:
            html.append("<p style='color:#b00020'><b>The server reported an error:</b></p>")
        for part in getattr(result, "parts", ()):
            html.append(self._part_html(part))
        structured = getattr(result, "structured", None)
        if structured is not None:
            html.append("<p><b>Structured content</b></p>")
            html.append(_pre(json.dumps(structured, indent=2, ensure_ascii=False, default=str)))
        if not getattr(result, "parts", ()) and structured is None:
            html.append("<p style='color:gray'>(empty result)</p>")
        self.setHtml("".join(html))

    def _part_html(self, part: Any) -> str:
        kind = getattr(part, "kind", "")
        if kind == "text":
            return _pre(part.text, error=self.is_error)
        if kind == "image":
            return self._image_html(part.data, part.mime_type)
        if kind == "resource":
            mime = esc(part.mime_type or "")
            head = f"<p><b>{esc(part.uri)}</b> <span style='color:gray'>{mime}</span></p>"
            if part.text is not None:
                return head + _pre(part.text)
            if part.blob is not None and (part.mime_type or "").startswith("image/"):
                return head + self._image_html(part.blob, part.mime_type or "")
            size = len(part.blob or b"")
            return head + f"<p style='color:gray'>[binary content, {size} bytes]</p>"
        if kind == "audio":
            return (
                f"<p style='color:gray'>[audio {esc(part.mime_type)}, {len(part.data)} bytes]</p>"
            )
        render = getattr(part, "render", None)
        return _pre(render() if callable(render) else str(part))

    def _image_html(self, data: bytes, mime: str) -> str:
        image = QImage.fromData(data)
        if image.isNull():
            return f"<p style='color:#b00020'>[image {esc(mime)} could not be decoded]</p>"
        index = len(self.images)
        self.images.append(image)
        url = QUrl(f"portico-image://{id(self)}/{self._serial}/{index}")
        self.document().addResource(QTextDocument.ResourceType.ImageResource, url, image)
        width = max(MIN_IMAGE_WIDTH, min(MAX_IMAGE_WIDTH, image.width()))
        return (
            f"<p><img src='{url.toString()}' width='{width}'><br>"
            f"<span style='color:gray'>{esc(mime)}, {image.width()}×{image.height()}</span></p>"
        )


def _pre(text: str, *, error: bool = False) -> str:
    if len(text) > MAX_TEXT:
        text = text[:MAX_TEXT] + f"\n… ({len(text) - MAX_TEXT} more characters not shown)"
    color = " color:#b00020;" if error else ""
    return f"<pre style='white-space:pre-wrap;{color}'>{esc(text)}</pre>"
