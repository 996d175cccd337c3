"""One drawing, every icon: the committed bitmaps match a fresh render; tray variants."""

from __future__ import annotations

import struct
import subprocess
import sys
from pathlib import Path

from PySide6.QtGui import QColor, QImage, QPalette

from portico.ui.icons import app_icon, resources_dir, tray_icon, tray_variant
from portico.ui.loop import ensure_application
from portico.ui.tray_state import Aggregate

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "resources" / "app"


def test_committed_icons_match_a_fresh_render_of_the_one_svg() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "installers" / "render_icons.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_png_set_ico_and_icns_hold_every_size_each_platform_wants() -> None:
    for size in (16, 24, 32, 48, 64, 128, 256, 512, 1024):
        image = QImage(str(APP / f"portico-{size}.png"))
        assert (image.width(), image.height()) == (size, size)
    data = (APP / "portico.ico").read_bytes()
    _, kind, count = struct.unpack_from("<HHH", data, 0)
    assert kind == 1 and count == 7
    edges = [data[6 + 16 * i] or 256 for i in range(count)]
    assert edges == [16, 24, 32, 48, 64, 128, 256]
    icns = (APP / "portico.icns").read_bytes()
    assert icns[:4] == b"icns" and struct.unpack(">I", icns[4:8])[0] == len(icns)
    kinds, at = [], 8
    while at < len(icns):
        kinds.append(icns[at : at + 4])
        at += struct.unpack(">I", icns[at + 4 : at + 8])[0]
    assert {b"icp4", b"ic07", b"ic08", b"ic09", b"ic10"} <= set(kinds)


def test_the_window_icon_comes_from_prerendered_pngs() -> None:
    ensure_application()
    icon = app_icon()
    assert not icon.isNull()
    assert {s.width() for s in icon.availableSizes()} >= {16, 32, 48, 64, 128, 256}


def test_tray_icons_exist_for_every_state_in_both_variants_and_follow_the_palette() -> None:
    app = ensure_application()
    root = resources_dir()
    assert root is not None
    for state in Aggregate:
        for variant in ("light", "dark"):
            assert (root / "icons" / f"tray-{state.value}-{variant}.svg").is_file()
            assert not tray_icon(state, variant).isNull()
    before = app.palette()
    try:
        dark = QPalette(before)
        dark.setColor(QPalette.ColorRole.Window, QColor("#202326"))
        app.setPalette(dark)
        assert tray_variant() == "dark"
        light = QPalette(before)
        light.setColor(QPalette.ColorRole.Window, QColor("#eff0f1"))
        app.setPalette(light)
        assert tray_variant() == "light"
    finally:
        app.setPalette(before)
    light_px = tray_icon(Aggregate.RUNNING, "light").pixmap(64).toImage().pixelColor(25, 40)
    dark_px = tray_icon(Aggregate.RUNNING, "dark").pixmap(64).toImage().pixelColor(25, 40)
    assert light_px.lightness() < 80 < 200 < dark_px.lightness()  # the glyph's own colour
