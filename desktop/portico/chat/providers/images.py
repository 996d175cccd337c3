"""Images for vision models: at most a few per result, downscaled to a size models take."""

from __future__ import annotations

import io
import logging
import struct

from portico.chat.providers.wire import ModelImage

log = logging.getLogger(__name__)

MAX_SIDE = 1568  # px: larger images are downscaled (keeps the aspect ratio)
MAX_PER_RESULT = 4
_SENDABLE = {"image/png", "image/jpeg", "image/gif", "image/webp"}


def prepare(data: bytes, mime_type: str) -> ModelImage | None:
    """The image as a vision model should get it; None when it cannot be read."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)) as image:
            width, height = image.size
            if max(width, height) <= MAX_SIDE and mime_type in _SENDABLE:
                return ModelImage(mime_type, data)
            scale = MAX_SIDE / max(width, height)
            size = (max(1, round(width * scale)), max(1, round(height * scale)))
            if scale >= 1:
                size = (width, height)
            converted = image.convert("RGBA" if image.mode in ("RGBA", "LA", "P") else "RGB")
            resized = converted.resize(size, Image.Resampling.LANCZOS)
            out = io.BytesIO()
            resized.save(out, format="PNG", optimize=True)
            return ModelImage("image/png", out.getvalue())
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError) as exc:
        # Pillow is strict (a bad CRC in an ancillary chunk fails it); a small PNG whose
        # header reads is sent as it is, since the models' decoders are tolerant.
        header_size = _png_size(data)
        if header_size is not None and max(header_size) <= MAX_SIDE and mime_type == "image/png":
            return ModelImage(mime_type, data)
        log.info("an image result could not be read for the model: %s", exc)
        return None


def _png_size(data: bytes) -> tuple[int, int] | None:
    if data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR" or len(data) < 24:
        return None
    width, height = struct.unpack(">II", data[16:24])
    return width, height
