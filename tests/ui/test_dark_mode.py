"""Dark mode follows the OS: the dark palette when the scheme says dark, the platform's own
back for light; every tone stays readable (4.5:1); the screenshots of the Servers place
come out dark in the dark palette."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import get_args

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage, QPalette

from portico.ui.loop import ensure_application
from portico.ui.palette import MIN_CONTRAST, Tone, contrast, follow_os_scheme, is_dark, tone_color

pytestmark = pytest.mark.slow  # real servers, processes or the app

SCRIPT = Path(__file__).with_name("servers_screenshot.py")


def test_the_palette_follows_the_scheme_and_tones_stay_readable() -> None:
    app = ensure_application()
    follower = follow_os_scheme(app)
    before = QPalette(app.palette())
    try:
        assert follower.follow(Qt.ColorScheme.Dark) == "dark"
        assert is_dark(app.palette())
        pal = app.palette()
        for role in (QPalette.ColorRole.Base, QPalette.ColorRole.Window):
            for kind in get_args(Tone):
                color = tone_color(kind, pal, role)
                assert contrast(color, pal.color(role)) >= MIN_CONTRAST, (kind, role)
        text = pal.color(QPalette.ColorRole.Text)
        assert contrast(text, pal.color(QPalette.ColorRole.Base)) >= 7
        assert follower.follow(Qt.ColorScheme.Light) == "light"
        assert not is_dark(app.palette())
    finally:
        app.setPalette(before)
        follower.applied = "light"


def _mean_lightness(path: Path) -> float:
    image = QImage(str(path))
    assert not image.isNull(), path
    samples = [
        image.pixelColor(x, y).lightnessF()
        for x in range(0, image.width(), 23)
        for y in range(0, image.height(), 23)
    ]
    return sum(samples) / len(samples)


def test_servers_screenshots_render_in_both_palettes(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    for view in ("place", "activity", "health"):
        light = _mean_lightness(tmp_path / f"servers-{view}-light.png")
        dark = _mean_lightness(tmp_path / f"servers-{view}-dark.png")
        assert light > 0.6 and dark < 0.35, (view, light, dark)
