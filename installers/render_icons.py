"""Every icon Portico ships, from one drawing: resources/portico.svg.

    QT_QPA_PLATFORM=offscreen .venv/bin/python installers/render_icons.py

writes
- resources/app/portico-N.png (16 ... 1024): the Linux hicolor set and Briefcase's icon;
- resources/app/portico.ico (16-256, PNG entries) for Windows, portico.icns for macOS;
- desktop/portico/resources/app/portico-N.png: the window icon, pre-rendered so the app
  never rasterises the SVG at start-up;
- desktop/portico/resources/icons/tray-STATE-VARIANT.svg: the tray glyph for each
  aggregate state, "light" (dark glyph, for light panels) and "dark" (light glyph).
`--check` renders into a temporary folder and fails if anything committed differs.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import struct
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, Qt
from PySide6.QtGui import QGuiApplication, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer

ROOT = Path(__file__).resolve().parent.parent
SVG = ROOT / "resources" / "portico.svg"
PNG_SIZES = (16, 24, 32, 48, 64, 128, 256, 512, 1024)
RUNTIME_SIZES = (16, 24, 32, 48, 64, 128, 256)
ICO_SIZES = (16, 24, 32, 48, 64, 128, 256)
# icns element types holding PNG data: (type, pixel size)
ICNS_TYPES = (
    (b"icp4", 16),
    (b"icp5", 32),
    (b"icp6", 64),
    (b"ic07", 128),
    (b"ic08", 256),
    (b"ic09", 512),
    (b"ic10", 1024),
    (b"ic11", 32),
    (b"ic12", 64),
    (b"ic13", 256),
    (b"ic14", 512),
)

TRAY_STATES = {  # aggregate state -> badge colour (None: no badge, dimmed glyph)
    "empty": None,
    "running": "#2e9d4f",
    "connecting": "#2f6fb0",
    "failed": "#d32f2f",
    "attention": "#e39a00",
}
TRAY_VARIANTS = {  # variant -> (glyph colour, panel colour that rings the badge)
    "light": ("#232629", "#ffffff"),
    "dark": ("#eff0f1", "#2a2e32"),
}
TEMPLE = (
    '<path d="M6 22 L30 8 L54 22 Z"/>'
    '<rect x="8" y="24" width="44" height="4" rx="1"/>'
    '<rect x="11" y="31" width="6" height="19" rx="1"/>'
    '<rect x="22" y="31" width="6" height="19" rx="1"/>'
    '<rect x="33" y="31" width="6" height="19" rx="1"/>'
    '<rect x="44" y="31" width="6" height="19" rx="1"/>'
    '<rect x="6" y="52" width="48" height="5" rx="1"/>'
)


def render(size: int, renderer: QSvgRenderer) -> QImage:
    image = QImage(size, size, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
    renderer.render(painter)
    painter.end()
    return image


def png_bytes(image: QImage) -> bytes:
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")
    buffer.close()
    return bytes(data.data())


def ico(pngs: dict[int, bytes]) -> bytes:
    """A Windows .ico whose entries are PNGs (Vista and later read them at every size)."""
    sizes = sorted(pngs)
    header = struct.pack("<HHH", 0, 1, len(sizes))
    offset = 6 + 16 * len(sizes)
    entries, blobs = b"", b""
    for size in sizes:
        blob = pngs[size]
        edge = 0 if size >= 256 else size  # 0 means 256 in the directory entry
        entries += struct.pack("<BBBBHHII", edge, edge, 0, 0, 1, 32, len(blob), offset)
        offset += len(blob)
        blobs += blob
    return header + entries + blobs


def icns(pngs: dict[int, bytes]) -> bytes:
    body = b""
    for kind, size in ICNS_TYPES:
        blob = pngs[size]
        body += kind + struct.pack(">I", 8 + len(blob)) + blob
    return b"icns" + struct.pack(">I", 8 + len(body)) + body


def tray_svg(state: str, variant: str) -> str:
    glyph, panel = TRAY_VARIANTS[variant]
    badge = TRAY_STATES[state]
    opacity = ' opacity="0.55"' if badge is None else ""
    parts = [
        '<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64" viewBox="0 0 64 64">',
        f'  <g fill="{glyph}"{opacity}>{TEMPLE}</g>',
    ]
    if badge is not None:
        parts.append(
            f'  <circle cx="50" cy="50" r="13" fill="{badge}" stroke="{panel}" stroke-width="4"/>'
        )
    parts.append("</svg>\n")
    return "\n".join(parts)


def write_all(root: Path) -> list[Path]:
    renderer = QSvgRenderer(str(SVG))
    if not renderer.isValid():
        raise SystemExit(f"{SVG}: not a valid SVG")
    app_dir = root / "resources" / "app"
    runtime_dir = root / "desktop" / "portico" / "resources" / "app"
    icons_dir = root / "desktop" / "portico" / "resources" / "icons"
    for folder in (app_dir, runtime_dir, icons_dir):
        folder.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    pngs = {size: png_bytes(render(size, renderer)) for size in PNG_SIZES}
    for size, blob in pngs.items():
        targets = [app_dir / f"portico-{size}.png"]
        if size in RUNTIME_SIZES:
            targets.append(runtime_dir / f"portico-{size}.png")
        for path in targets:
            path.write_bytes(blob)
            written.append(path)
    (app_dir / "portico.ico").write_bytes(ico({s: pngs[s] for s in ICO_SIZES}))
    (app_dir / "portico.icns").write_bytes(icns(pngs))
    written += [app_dir / "portico.ico", app_dir / "portico.icns"]
    for state in TRAY_STATES:
        for variant in TRAY_VARIANTS:
            path = icons_dir / f"tray-{state}-{variant}.svg"
            path.write_text(tray_svg(state, variant), encoding="utf-8")
            written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="fail if a committed icon differs")
    args = parser.parse_args(argv)
    QGuiApplication.instance() or QGuiApplication(sys.argv[:1])
    if not args.check:
        for path in write_all(ROOT):
            print(path.relative_to(ROOT))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        stale = [
            path.relative_to(tmp)
            for path in write_all(Path(tmp))
            if not (ROOT / path.relative_to(tmp)).is_file()
            or not filecmp.cmp(path, ROOT / path.relative_to(tmp), shallow=False)
        ]
    for path in stale:
        print(f"{path}: differs from a fresh render (run installers/render_icons.py)")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
