"""Render the app icon (desktop/portico/resources/portico.svg) to the bitmaps Briefcase wants.

QT_QPA_PLATFORM=offscreen .venv/bin/python installers/render_icons.py
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer

ROOT = Path(__file__).resolve().parent.parent
SVG = ROOT / "desktop" / "portico" / "resources" / "portico.svg"
OUT = ROOT / "resources" / "app"
SIZES = (16, 32, 64, 128, 256, 512)


def render(size: int, renderer: QSvgRenderer) -> QImage:
    image = QImage(size, size, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter)
    painter.end()
    return image


def main() -> int:
    QGuiApplication.instance() or QGuiApplication(sys.argv[:1])
    renderer = QSvgRenderer(str(SVG))
    if not renderer.isValid():
        print(f"{SVG}: not a valid SVG", file=sys.stderr)
        return 1
    OUT.mkdir(parents=True, exist_ok=True)
    for size in SIZES:
        path = OUT / f"portico-{size}.png"
        render(size, renderer).save(str(path))
        print(path)
    render(256, renderer).save(str(OUT / "portico.ico"))
    render(512, renderer).save(str(OUT / "portico.icns"))
    print(OUT / "portico.ico", OUT / "portico.icns", sep="\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
