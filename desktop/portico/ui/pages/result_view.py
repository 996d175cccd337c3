"""Shows a processed result (tool call, prompt, resource read): text, images, structured
content and errors, in one selectable view. Images are decoded from the bytes the
runtime copied across (never re-read from disk).

Laying out text is done on the GUI thread, so a big result is shown cut: each text part
up to ``MAX_TEXT`` characters, with a note and a "Show all (N characters)" link; runs
without line breaks are broken every ``LINE_BREAK`` characters for display (Qt wraps one
huge unbroken line in quadratic time: 200,000 characters took 3.3 s). "Copy all" and
"Save…" (links and context menu) always give the exact, complete text; Save writes on a
worker thread (up to ~10 MiB) and a failure shows in a notice line above the text.
"""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, QUrl, Signal
from PySide6.QtGui import (
    QContextMenuEvent,
    QGuiApplication,
    QImage,
    QResizeEvent,
    QTextDocument,
)
from PySide6.QtWidgets import QFileDialog, QLabel, QTextBrowser, QWidget

from portico.ui.ops import Ops
from portico.ui.pages.common import esc
from portico.ui.palette import tone
from portico.ui.text import set_plain

MAX_IMAGE_WIDTH = 480
MIN_IMAGE_WIDTH = 48  # tiny icons are scaled up to be seen
MAX_TEXT = 200_000  # characters shown per text part until "Show all"
LINE_BREAK = 1_000  # display-only break in longer runs without a newline

_ACTION = "portico-action:"

log = logging.getLogger(__name__)


TEXT_TYPES = ("application/json", "application/xml", "application/yaml", "application/toml")


def blob_text(blob: bytes | None, mime_type: str | None) -> str | None:
    """A blob whose type says text (text/*, JSON, XML, …) and that decodes: as text."""
    if blob is None:
        return None
    mime = (mime_type or "").split(";")[0].strip().lower()
    if not (mime.startswith("text/") or mime in TEXT_TYPES or mime.endswith(("+json", "+xml"))):
        return None
    try:
        return blob.decode("utf-8")
    except UnicodeDecodeError:
        return None


class ResultView(QTextBrowser):
    saved = Signal(str)  # the path the full text was written to
    saveFailed = Signal(str, str)  # path, reason

    def __init__(self, name: str = "result", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setOpenLinks(False)
        self.setAccessibleName(name)
        self.images: list[QImage] = []
        self.is_error = False
        self.truncated = False  # some text is not shown (a "Show all" link is)
        self.full_text = ""  # the complete text of the result, for Copy all / Save
        self._serial = 0
        self._shown: tuple[Any, str] | None = None
        self._show_all = False
        self.save_dialog: QFileDialog | None = None
        self.ops = Ops()  # the save's own failure is shown in the notice line (_write)
        # A notice line above the text (a failed save); it sits in a top viewport margin.
        self.notice = QLabel(self)
        self.notice.setAccessibleName("result notice")
        self.notice.setWordWrap(True)
        self.notice.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.notice.hide()
        self.setPlaceholderText("The result appears here.")
        self.anchorClicked.connect(self._anchor)

    def clear(self) -> None:
        super().clear()
        self.images = []
        self.is_error = False
        self.truncated = False
        self.full_text = ""
        self._shown = None
        self.hide_notice()

    def show_message(self, text: str, *, error: bool = False) -> None:
        self.images = []
        self.is_error = error
        self.truncated = False
        self._shown = None
        self.full_text = text
        self.hide_notice()
        color = tone("error" if error else "muted")
        self.setHtml(f"<p style='color:{color}; white-space:pre-wrap'>{esc(text)}</p>")

    def show_result(self, result: Any, heading: str = "") -> None:
        """``result`` is a ``portico.runtime.results.ToolResult``."""
        self._show_all = False
        self.hide_notice()
        self._render(result, heading)

    def show_all(self) -> None:
        """Render the last result without the cut (may take a while for huge text)."""
        if self._shown is not None:
            self._show_all = True
            self._render(*self._shown)

    # --- rendering ---------------------------------------------------------------------

    def _render(self, result: Any, heading: str) -> None:
        self._shown = (result, heading)
        self.images = []
        self._serial += 1
        self.truncated = False
        self.is_error = bool(getattr(result, "is_error", False))
        html: list[str] = []
        full: list[str] = []
        if heading:
            html.append(f"<p><b>{esc(heading)}</b></p>")
        if self.is_error:
            html.append(
                f"<p style='color:{tone('error')}'><b>The server reported an error:</b></p>"
            )
        for part in getattr(result, "parts", ()):
            html.append(self._part_html(part, full))
        structured = getattr(result, "structured", None)
        if structured is not None:
            text = json.dumps(structured, indent=2, ensure_ascii=False, default=str)
            full.append(text)
            html.append("<p><b>Structured content</b></p>")
            html.append(self._pre(text))
        if not getattr(result, "parts", ()) and structured is None:
            html.append(f"<p style='color:{tone('muted')}'>(empty result)</p>")
        self.full_text = "\n".join(full)
        if self.truncated:
            html.append(self._cut_note())
        self.setHtml("".join(html))

    def _part_html(self, part: Any, full: list[str]) -> str:
        kind = getattr(part, "kind", "")
        muted = tone("muted")
        if kind == "text":
            full.append(part.text)
            return self._pre(part.text, error=self.is_error)
        if kind == "image":
            return self._image_html(part.data, part.mime_type)
        if kind == "resource":
            mime = esc(part.mime_type or "")
            head = f"<p><b>{esc(part.uri)}</b> <span style='color:{muted}'>{mime}</span></p>"
            if part.text is not None:
                full.append(part.text)
                return head + self._pre(part.text)
            if part.blob is not None and (part.mime_type or "").startswith("image/"):
                return head + self._image_html(part.blob, part.mime_type or "")
            text = blob_text(part.blob, part.mime_type)
            if text is not None:
                full.append(text)
                return head + self._pre(text)
            size = len(part.blob or b"")
            return head + f"<p style='color:{muted}'>[binary content, {size} bytes]</p>"
        if kind == "audio":
            size = len(part.data)
            return f"<p style='color:{muted}'>[audio {esc(part.mime_type)}, {size} bytes]</p>"
        render = getattr(part, "render", None)
        text = render() if callable(render) else str(part)
        full.append(text)
        return self._pre(text)

    def _pre(self, text: str, *, error: bool = False) -> str:
        if len(text) > MAX_TEXT and not self._show_all:
            self.truncated = True
            text = text[:MAX_TEXT]
        color = f" color:{tone('error')};" if error else ""
        return f"<pre style='white-space:pre-wrap;{color}'>{esc(_break_long_runs(text))}</pre>"

    def _cut_note(self) -> str:
        total = len(self.full_text)
        return (
            f"<p style='color:{tone('muted')}'>The text is cut at {MAX_TEXT:,} characters per "
            f"part ({total:,} characters in all). "
            f"<a href='{_ACTION}show-all'>Show all ({total:,} characters)</a> · "
            f"<a href='{_ACTION}copy-all'>Copy all</a> · "
            f"<a href='{_ACTION}save'>Save…</a></p>"
        )

    def _image_html(self, data: bytes, mime: str) -> str:
        image = QImage.fromData(data)
        if image.isNull():
            return f"<p style='color:{tone('error')}'>[image {esc(mime)} could not be decoded]</p>"
        index = len(self.images)
        self.images.append(image)
        url = QUrl(f"portico-image://{id(self)}/{self._serial}/{index}")
        self.document().addResource(QTextDocument.ResourceType.ImageResource, url, image)
        width = max(MIN_IMAGE_WIDTH, min(MAX_IMAGE_WIDTH, image.width()))
        return (
            f"<p><img src='{url.toString()}' width='{width}'><br>"
            f"<span style='color:{tone('muted')}'>"
            f"{esc(mime)}, {image.width()}×{image.height()}</span></p>"
        )

    # --- copy, save, show all ------------------------------------------------------------

    def copy_all(self) -> None:
        QGuiApplication.clipboard().setText(self.full_text)

    def save_to(self, path: str) -> asyncio.Task[None] | None:
        """Write the full text to ``path`` on a worker thread (a slot: returns the task)."""
        if not path:
            return None
        return self.ops.spawn(self._write(path, self.full_text), "Save the result")

    async def _write(self, path: str, text: str) -> None:
        try:
            await asyncio.to_thread(Path(path).write_text, text, encoding="utf-8")
        except (OSError, ValueError) as exc:  # ValueError: text a codec cannot encode
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            log.warning("saving the result to %s failed: %s", path, reason)
            self.show_notice(f"Could not save the result to {path}: {reason}.", error=True)
            self.saveFailed.emit(path, reason)
            return
        self.hide_notice()
        self.saved.emit(path)

    def show_notice(self, text: str, *, error: bool = False) -> None:
        color = tone("error" if error else "muted")
        self.notice.setStyleSheet(f"color:{color}; padding:4px")
        set_plain(self.notice, text)
        self.notice.show()
        self._place_notice()

    def hide_notice(self) -> None:
        self.notice.hide()
        self.notice.clear()
        self.setViewportMargins(0, 0, 0, 0)

    def _place_notice(self) -> None:
        if self.notice.isHidden():
            return
        frame = self.frameWidth()
        width = max(1, self.width() - 2 * frame)
        height = self.notice.heightForWidth(width)
        height = height if height > 0 else self.notice.sizeHint().height()
        self.notice.setGeometry(frame, frame, width, height)
        self.setViewportMargins(0, height, 0, 0)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._place_notice()

    def save(self) -> QFileDialog:
        """Ask where to save the full text (non-modal; no nested loop)."""
        dialog = QFileDialog(self, "Save the full result")
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.selectFile("result.txt")
        dialog.fileSelected.connect(self.save_to)
        self.save_dialog = dialog
        dialog.open()
        return dialog

    def _anchor(self, url: QUrl) -> None:
        action = url.toString().removeprefix(_ACTION)
        if action == "show-all":
            self.show_all()
        elif action == "copy-all":
            self.copy_all()
        elif action == "save":
            self.save()

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:
        menu = self.createStandardContextMenu(event.pos())
        if self.full_text:
            menu.addSeparator()
            menu.addAction("Copy All Text", self.copy_all)
            menu.addAction("Save Text…", self.save)
            if self.truncated:
                menu.addAction(f"Show All ({len(self.full_text):,} characters)", self.show_all)
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        menu.popup(event.globalPos())


def _break_long_runs(text: str) -> str:
    """Break runs without a newline every ``LINE_BREAK`` characters (display only)."""
    if len(text) <= LINE_BREAK:
        return text
    lines = text.split("\n")
    if all(len(line) <= LINE_BREAK for line in lines):
        return text
    return "\n".join(
        "\n".join(line[i : i + LINE_BREAK] for i in range(0, len(line), LINE_BREAK))
        if len(line) > LINE_BREAK
        else line
        for line in lines
    )
