"""The heights people gave views, per view (its server and resource URI), kept across
chats and restarts in ``view-heights.json`` in the state folder. Read and written on the
runtime side (file I/O), never on the GUI thread."""

from __future__ import annotations

import json
import logging
from pathlib import Path

from portico.config.atomic import write_atomic

log = logging.getLogger(__name__)

FILE_NAME = "view-heights.json"
MIN_HEIGHT, MAX_HEIGHT = 80, 1200  # px: a height outside is brought within
MAX_REMEMBERED = 500  # views; the oldest are forgotten first


class ViewHeights:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._heights: dict[str, int] | None = None

    @staticmethod
    def key(server: str, uri: str) -> str:
        return json.dumps([server, uri])

    def _load(self) -> dict[str, int]:
        if self._heights is not None:
            return self._heights
        heights: dict[str, int] = {}
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raw = {}
        except (OSError, ValueError) as exc:
            log.warning(
                "%s: the views' heights cannot be read (%s); starting afresh", self.path, exc
            )
            raw = {}
        if isinstance(raw, dict):
            for key, value in raw.items():
                if isinstance(key, str) and isinstance(value, int) and not isinstance(value, bool):
                    heights[key] = clamp(value)
        self._heights = heights
        return heights

    def get(self, server: str, uri: str) -> int | None:
        return self._load().get(self.key(server, uri))

    def set(self, server: str, uri: str, height: int) -> int:
        """Remember ``height`` (brought within the limits) and write the file."""
        heights = self._load()
        key = self.key(server, uri)
        heights.pop(key, None)
        heights[key] = clamp(height)
        while len(heights) > MAX_REMEMBERED:
            heights.pop(next(iter(heights)))
        try:
            write_atomic(self.path, json.dumps(heights, indent=1) + "\n")
        except OSError as exc:
            log.warning("%s: the view's height cannot be saved (%s)", self.path, exc)
        return heights[key]


def clamp(height: int) -> int:
    return max(MIN_HEIGHT, min(height, MAX_HEIGHT))
