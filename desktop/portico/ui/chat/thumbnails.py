"""Images decoded off the GUI thread: a thumbnail at most ``THUMB`` pixels on a side for
the transcript, the whole picture only when it is enlarged.

Decoding a large PNG or JPEG takes hundreds of milliseconds (a 6000x6000 PNG: ~0.4 s);
``QImageReader`` and ``QImage`` may be used on any thread and release the GIL while they
decode, so a worker thread (``asyncio.to_thread``, run as an :class:`~portico.ui.ops.Ops`
operation) does it and the result is shown on the GUI thread. Only ``QPixmap`` (GUI thread)
is made from the small result.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import shiboken6
from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QSize, Qt
from PySide6.QtGui import QImage, QImageReader, QMouseEvent, QPixmap
from PySide6.QtWidgets import QDialog, QLabel, QPushButton, QScrollArea, QVBoxLayout, QWidget

from portico.ui.ops import Ops

log = logging.getLogger(__name__)

THUMB = 240  # the longest side of an inline image
WHOLE = 2400  # the longest side of an enlarged one (a bigger QPixmap costs the GUI thread)
ImageSource = bytes | Path

DECODES = Ops()  # the decodes under way (kept alive until they call back)


def decode(source: ImageSource, longest: int | None = THUMB) -> QImage:
    """``source`` decoded, scaled while decoding to at most ``longest`` on a side (None:
    whole); a null QImage when it is not an image Qt reads. Safe on any thread."""
    buffer: QBuffer | None = None
    if isinstance(source, bytes):
        buffer = QBuffer()
        buffer.setData(QByteArray(source))
        buffer.open(QIODevice.OpenModeFlag.ReadOnly)
        reader = QImageReader(buffer)
    else:
        reader = QImageReader(str(source))
    reader.setAutoTransform(True)  # a photo's EXIF orientation
    size = reader.size()
    if longest is not None and size.isValid() and max(size.width(), size.height()) > longest:
        scaled = size.scaled(QSize(longest, longest), Qt.AspectRatioMode.KeepAspectRatio)
        reader.setScaledSize(scaled)
    image = reader.read()
    if buffer is not None:
        buffer.close()
    return image


def load(source: ImageSource, longest: int | None, done: Callable[[QImage], object]) -> None:
    """Decode ``source`` in a worker thread, then call ``done`` with it on the GUI thread.
    Without a running loop (a widget built outside the app) there is no loop to keep
    responsive: it decodes at once."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        done(decode(source, longest))
        return

    async def work() -> QImage:
        return await asyncio.to_thread(decode, source, longest)

    def failed(exc: Exception) -> None:
        log.info("decoding an image failed: %s", exc)
        done(QImage())

    DECODES.op(work, "Show an image").success(done).failure(failed).run()


class ImageThumb(QLabel):
    """An inline image (decoded in a worker, a line until then); a click (or Enter/Space
    when focused) shows it full size, decoded then."""

    def __init__(self, source: ImageSource, name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.source = source
        self.name = name
        self.decoded = False  # the thumbnail arrived (or the image proved unreadable)
        self.failed = False
        self.viewer: QDialog | None = None
        self.setText(f"🖼 {name}…")
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setAccessibleName(f"image {name}, press Enter to enlarge")
        self.setToolTip("Click to enlarge")
        load(source, THUMB, self._show)

    def _show(self, image: QImage) -> None:
        if not shiboken6.isValid(self):  # the transcript was rebuilt meanwhile
            return
        self.decoded = True
        if image.isNull():
            self.failed = True
            self.setText(f"{self.name}: not an image this app can show")
            self.setAccessibleName(f"image {self.name}, not shown")
            self.setCursor(Qt.CursorShape.ArrowCursor)
            return
        self.setPixmap(QPixmap.fromImage(image))

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self.enlarge()

    def keyPressEvent(self, event: Any) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Space):
            self.enlarge()
            return
        super().keyPressEvent(event)

    def enlarge(self) -> QDialog:
        """A non-modal window with the image up to ``WHOLE`` on a side (a line until it
        is decoded)."""
        dialog = QDialog(self.window())
        dialog.setWindowTitle(self.name)
        dialog.setAccessibleName(f"image {self.name}")
        scroll = QScrollArea()
        big = QLabel(f"Opening {self.name}…")
        big.setAccessibleName("whole image")
        scroll.setWidget(big)
        column = QVBoxLayout(dialog)
        column.addWidget(scroll)
        close = QPushButton("Close")
        close.setAutoDefault(False)
        close.clicked.connect(dialog.close)
        column.addWidget(close, 0, Qt.AlignmentFlag.AlignRight)
        dialog.resize(640, 480)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.show()  # non-modal: the chat stays usable

        def whole(image: QImage) -> None:
            if not shiboken6.isValid(big):
                return
            if image.isNull():
                big.setText(f"{self.name}: not an image this app can show")
            else:
                big.setPixmap(QPixmap.fromImage(image))
                big.adjustSize()
                dialog.resize(min(image.width() + 40, 1200), min(image.height() + 80, 900))

        load(self.source, WHOLE, whole)
        self.viewer = dialog
        return dialog
