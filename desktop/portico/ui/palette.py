"""Text colours for meanings (error, warning, info, ok, muted) taken from the current
QPalette, so light and dark palettes both stay readable.

Each tone starts from a hue that suits the palette's lightness and is then pulled toward
the palette's own text colour until it reaches a WCAG contrast of 4.5:1 against the
background it is drawn on. HTML gets the colour as ``#rrggbb`` at render time.
"""

from __future__ import annotations

from typing import Literal

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QWidget

Tone = Literal["error", "warning", "info", "ok", "muted"]
MIN_CONTRAST = 4.5

_LIGHT = {
    "error": "#b00020",
    "warning": "#8a5a00",
    "info": "#1f5c99",
    "ok": "#2e7d32",
}
_DARK = {
    "error": "#ff8a80",
    "warning": "#ffcc66",
    "info": "#8ab4f8",
    "ok": "#81c784",
}


def current_palette(palette: QPalette | None = None) -> QPalette:
    return palette if palette is not None else QGuiApplication.palette()


def is_dark(palette: QPalette | None = None) -> bool:
    return current_palette(palette).color(QPalette.ColorRole.Base).lightnessF() < 0.5


def luminance(color: QColor) -> float:
    def channel(value: float) -> float:
        return value / 12.92 if value <= 0.03928 else ((value + 0.055) / 1.055) ** 2.4

    return (
        0.2126 * channel(color.redF())
        + 0.7152 * channel(color.greenF())
        + 0.0722 * channel(color.blueF())
    )


def contrast(a: QColor, b: QColor) -> float:
    """The WCAG contrast ratio of two colours (1 to 21)."""
    la, lb = luminance(a), luminance(b)
    return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)


def _mix(a: QColor, b: QColor, t: float) -> QColor:
    return QColor.fromRgbF(
        a.redF() + (b.redF() - a.redF()) * t,
        a.greenF() + (b.greenF() - a.greenF()) * t,
        a.blueF() + (b.blueF() - a.blueF()) * t,
    )


def tone_color(
    tone: Tone,
    palette: QPalette | None = None,
    role: QPalette.ColorRole = QPalette.ColorRole.Base,
) -> QColor:
    """The colour for ``tone`` on the palette's ``role`` background (Base for text views,
    Window for labels)."""
    pal = current_palette(palette)
    background = pal.color(role)
    text = pal.color(
        QPalette.ColorRole.Text
        if role == QPalette.ColorRole.Base
        else QPalette.ColorRole.WindowText
    )
    if tone == "muted":
        start = _mix(text, background, 0.4)
    else:
        start = QColor((_DARK if is_dark(pal) else _LIGHT)[tone])
    color = start
    step = 0
    while contrast(color, background) < MIN_CONTRAST and step < 10:
        step += 1
        color = _mix(start, text, step / 10)
    return color


def tone(
    tone: Tone,
    palette: QPalette | None = None,
    role: QPalette.ColorRole = QPalette.ColorRole.Base,
) -> str:
    """``tone_color`` as ``#rrggbb`` for HTML and style sheets."""
    return tone_color(tone, palette, role).name()


def set_tone(widget: QWidget, kind: Tone) -> None:
    """Colour a label's (or any widget's) text with ``kind`` via its palette; the colour
    follows a later change of the application palette (light <-> dark)."""
    keeper = widget.findChild(_ToneKeeper, "portico-tone")
    if keeper is None:
        keeper = _ToneKeeper(widget)
        widget.installEventFilter(keeper)
    keeper.kind = kind
    keeper.apply(widget)


class _ToneKeeper(QObject):
    def __init__(self, widget: QWidget) -> None:
        super().__init__(widget)
        self.setObjectName("portico-tone")
        self.kind: Tone = "muted"

    def apply(self, widget: QWidget) -> None:
        app = QGuiApplication.palette()
        color = tone_color(self.kind, app, QPalette.ColorRole.Window)
        pal = widget.palette()
        if (
            pal.color(QPalette.ColorRole.WindowText) == color
            and pal.color(QPalette.ColorRole.Text) == color
        ):
            return  # also ends the PaletteChange our own setPalette sends
        pal.setColor(QPalette.ColorRole.WindowText, color)
        pal.setColor(QPalette.ColorRole.Text, color)
        widget.setPalette(pal)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        # An application palette change reaches a widget as PaletteChange (posted).
        if event.type() in _PALETTE_EVENTS and isinstance(watched, QWidget):
            self.apply(watched)
        return False


_PALETTE_EVENTS = (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange)


# --- following the OS's light / dark setting ---------------------------------------------

_DARK_ROLES = {
    QPalette.ColorRole.Window: "#202124",
    QPalette.ColorRole.WindowText: "#e8eaed",
    QPalette.ColorRole.Base: "#17181a",
    QPalette.ColorRole.AlternateBase: "#26282b",
    QPalette.ColorRole.ToolTipBase: "#303134",
    QPalette.ColorRole.ToolTipText: "#e8eaed",
    QPalette.ColorRole.PlaceholderText: "#9aa0a6",
    QPalette.ColorRole.Text: "#e8eaed",
    QPalette.ColorRole.Button: "#2d2e31",
    QPalette.ColorRole.ButtonText: "#e8eaed",
    QPalette.ColorRole.BrightText: "#ffffff",
    QPalette.ColorRole.Light: "#3c4043",
    QPalette.ColorRole.Midlight: "#34363a",
    QPalette.ColorRole.Mid: "#2a2b2e",
    QPalette.ColorRole.Dark: "#111213",
    QPalette.ColorRole.Shadow: "#000000",
    QPalette.ColorRole.Highlight: "#3d6fb4",
    QPalette.ColorRole.HighlightedText: "#ffffff",
    QPalette.ColorRole.Link: "#8ab4f8",
    QPalette.ColorRole.LinkVisited: "#c58af9",
}
_DARK_DISABLED = {
    QPalette.ColorRole.WindowText: "#7b7f84",
    QPalette.ColorRole.Text: "#7b7f84",
    QPalette.ColorRole.ButtonText: "#7b7f84",
}


def dark_palette() -> QPalette:
    """A dark palette whose text passes the same contrast test as the tones."""
    pal = QPalette()
    for role, color in _DARK_ROLES.items():
        pal.setColor(role, QColor(color))
    for role, color in _DARK_DISABLED.items():
        pal.setColor(QPalette.ColorGroup.Disabled, role, QColor(color))
    return pal


class SchemeFollower(QObject):
    """Keeps the app's palette in step with the OS's colour scheme (Qt's style hints).

    When the OS asks for dark and the platform theme's palette is light (Fusion on many
    Linux desktops, offscreen), the dark palette is applied; back to light restores the
    platform's own palette. Every tone follows (they read the palette when drawn).
    """

    def __init__(self, app: QGuiApplication) -> None:
        super().__init__(app)
        self.app = app
        self.light = QPalette(app.palette())
        self.applied: str = "light"
        hints = app.styleHints()
        hints.colorSchemeChanged.connect(lambda _scheme: self.follow())
        self.follow()

    def follow(self, scheme: Qt.ColorScheme | None = None) -> str:
        wanted = scheme if scheme is not None else self.app.styleHints().colorScheme()
        if wanted == Qt.ColorScheme.Dark:
            if not is_dark(self.app.palette()):
                self.app.setPalette(dark_palette())
            self.applied = "dark"
        else:
            if self.applied == "dark":
                self.app.setPalette(self.light)
            self.applied = "light"
        return self.applied


def follow_os_scheme(app: QGuiApplication) -> SchemeFollower:
    follower = app.findChild(SchemeFollower)
    return follower if isinstance(follower, SchemeFollower) else SchemeFollower(app)
