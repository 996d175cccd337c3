"""The rail's places show icons drawn from the app's own SVGs, in the buttons' text colour
(light and dark), and no text that needs a glyph the machine's fonts may lack."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFontMetrics, QIcon, QImage, QPalette
from pytestqt.qtbot import QtBot

from portico.ui.icons import resources_dir
from portico.ui.main_window import RAIL_ICON, MainWindow


def _image(icon: QIcon, size: int = RAIL_ICON) -> QImage:
    return icon.pixmap(size, size).toImage().convertToFormat(QImage.Format.Format_ARGB32)


def _alpha(image: QImage) -> list[int]:
    return [
        image.pixelColor(x, y).alpha() for y in range(image.height()) for x in range(image.width())
    ]


def _colours(image: QImage) -> set[str]:
    """The colours of the icon's opaque pixels."""
    return {
        image.pixelColor(x, y).name()
        for y in range(image.height())
        for x in range(image.width())
        if image.pixelColor(x, y).alpha() == 255
    }


def test_rail_icons_are_our_svgs_in_the_text_colour(qtbot: QtBot) -> None:
    window = MainWindow()
    qtbot.addWidget(window)
    root = resources_dir()
    assert root is not None
    shapes = {}
    for name, button in window.rail_buttons.items():
        assert button.toolButtonStyle() is Qt.ToolButtonStyle.ToolButtonTextUnderIcon
        assert not button.icon().isNull(), name
        image = _image(button.icon())
        drawn = _alpha(image)
        assert sum(a > 0 for a in drawn) > RAIL_ICON * RAIL_ICON // 5, f"{name}: nearly empty"
        svg = _image(QIcon(str(root / "icons" / f"place-{name.lower()}.svg")))
        assert drawn == _alpha(svg), f"{name}: not the shape of place-{name.lower()}.svg"
        text = button.palette().color(QPalette.ColorRole.ButtonText).name()
        assert _colours(image) == {text}, name
        shapes[name] = drawn
    assert shapes["Chats"] != shapes["Servers"]


def test_rail_text_needs_no_glyph_outside_the_font(qtbot: QtBot) -> None:
    window = MainWindow()
    qtbot.addWidget(window)
    for name, button in window.rail_buttons.items():
        metrics = QFontMetrics(button.font())
        missing = [c for c in button.text() if not metrics.inFontUcs4(ord(c))]
        assert missing == [], f"{name}: {missing} would show as boxes"


def test_rail_icons_follow_a_dark_palette(qtbot: QtBot) -> None:
    window = MainWindow()
    qtbot.addWidget(window)
    dark = QPalette(window.palette())
    for role, colour in (
        (QPalette.ColorRole.Window, "#202124"),
        (QPalette.ColorRole.Button, "#303134"),
        (QPalette.ColorRole.ButtonText, "#e8eaed"),
        (QPalette.ColorRole.WindowText, "#e8eaed"),
    ):
        dark.setColor(role, QColor(colour))
    window.setPalette(dark)  # what a switch to dark mode does (palette.follow_os_scheme)
    for name, button in window.rail_buttons.items():
        assert _colours(_image(button.icon())) == {"#e8eaed"}, name
