"""Icons: the SVGs in the package's resources/ (installed as package data), with a painted
fallback so a missing file never breaks the window."""

from __future__ import annotations

import functools
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QIcon, QPainter, QPixmap

from portico.runtime.events import Status
from portico.ui.tray_state import Aggregate

_STATUS_FILE: dict[Status, str] = {
    Status.RUNNING: "running",
    Status.CONNECTING: "connecting",
    Status.AWAITING_TRUST: "attention",
    Status.NEEDS_AUTH: "attention",
    Status.FAILED: "failed",
    Status.COOLDOWN: "cooldown",
    Status.DISABLED: "disabled",
    Status.REJECTED: "disabled",
    Status.LAZY: "lazy",
    Status.STOPPED: "stopped",
}
_FALLBACK_COLOR = {
    "running": "#2e9d4f",
    "connecting": "#2f6fb0",
    "attention": "#d08a00",
    "failed": "#c62828",
    "cooldown": "#e0662a",
    "disabled": "#8a8a8a",
    "lazy": "#6d8fb3",
    "stopped": "#b0b0b0",
    "empty": "#7d8796",
}


@functools.cache
def resources_dir() -> Path | None:
    candidate = Path(__file__).resolve().parent.parent / "resources"  # portico/resources
    return candidate if (candidate / "portico.svg").is_file() else None


def _load(relative: str, fallback: str) -> QIcon:
    root = resources_dir()
    if root is not None and (root / relative).is_file():
        icon = QIcon(str(root / relative))
        if not icon.isNull():
            return icon
    return _painted(_FALLBACK_COLOR.get(fallback, "#2a64b8"))


def _painted(color: str) -> QIcon:
    pixmap = QPixmap(32, 32)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setBrush(QColor(color))
    painter.setPen(Qt.PenStyle.NoPen)
    painter.drawEllipse(3, 3, 26, 26)
    painter.end()
    return QIcon(pixmap)


@functools.cache
def status_icon(status: Status) -> QIcon:
    name = _STATUS_FILE[status]
    return _load(f"icons/status-{name}.svg", name)


@functools.cache
def tray_icon(state: Aggregate) -> QIcon:
    return _load(f"icons/tray-{state.value}.svg", state.value)


@functools.cache
def app_icon() -> QIcon:
    return _load("portico.svg", "running")
