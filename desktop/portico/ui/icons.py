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
    return candidate if (candidate / "icons").is_dir() else None


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


def tray_variant() -> str:
    """ "dark" (a light glyph) when the desktop's palette is dark, else "light"."""
    from PySide6.QtGui import QGuiApplication, QPalette

    app = QGuiApplication.instance()
    if not isinstance(app, QGuiApplication):
        return "light"
    window = app.palette().color(QPalette.ColorRole.Window)
    return "dark" if window.lightness() < 128 else "light"


@functools.cache
def tray_icon(state: Aggregate, variant: str = "light") -> QIcon:
    return _load(f"icons/tray-{state.value}-{variant}.svg", state.value)


PLACE_ICON_SIZES = (24, 48)  # the rail's size, and for 2x screens


def place_icon(name: str, color: QColor) -> QIcon:
    """A rail place's icon (``resources/icons/place-NAME.svg``, a mask) in ``color``, the
    button's text colour, so it follows light and dark mode. Drawn from our own file: no
    font on the machine needs a glyph for it."""
    root = resources_dir()
    source = QIcon(str(root / "icons" / f"place-{name}.svg")) if root is not None else QIcon()
    icon = QIcon()
    for size in PLACE_ICON_SIZES:
        mask = source.pixmap(size, size)
        if mask.isNull():
            return _painted(color.name())
        tinted = QPixmap(mask.size())
        tinted.fill(Qt.GlobalColor.transparent)
        painter = QPainter(tinted)
        painter.drawPixmap(0, 0, mask)
        painter.setCompositionMode(QPainter.CompositionMode.CompositionMode_SourceIn)
        painter.fillRect(tinted.rect(), color)
        painter.end()
        icon.addPixmap(tinted)
    return icon


@functools.cache
def app_icon() -> QIcon:
    """The window icon from PNGs rendered at build time (installers/render_icons.py): no
    SVG rasterising at start-up."""
    root = resources_dir()
    icon = QIcon()
    if root is not None:
        for png in sorted((root / "app").glob("portico-*.png")):
            icon.addFile(str(png))
    return icon if not icon.isNull() else _painted(_FALLBACK_COLOR["running"])


_ANNOUNCED: dict[str, QIcon | None] = {}
_ANNOUNCED_MAX = 512


def announced_icon(path: str | None) -> QIcon | None:
    """The icon a server announced (a checked file in the icon cache, runtime/icons.py),
    or None when there is none or it does not decode. Files are named by content hash, so
    one path always holds the same picture and the loaded icon can be kept."""
    if not path:
        return None
    if path not in _ANNOUNCED:
        if len(_ANNOUNCED) >= _ANNOUNCED_MAX:
            _ANNOUNCED.clear()
        icon = QIcon(path)
        # availableSizes() is empty for a scalable (SVG) icon: ask for a pixmap instead.
        _ANNOUNCED[path] = None if icon.pixmap(16, 16).isNull() else icon
    return _ANNOUNCED[path]
