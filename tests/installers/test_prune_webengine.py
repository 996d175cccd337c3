"""The .deb leaves out what views never use of QtWebEngine (the developer tools' pages and
every Chromium locale but en-US), and a view still runs on what is left, with the person's
locale one that has no file of its own."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import PySide6
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "installers"))
import build  # noqa: E402

QT = Path(PySide6.__file__).parent / "Qt"
RESOURCES = QT / "resources"
LOCALES = QT / "translations" / "qtwebengine_locales"


def _linked_tree(tmp_path: Path) -> Path:
    """A PySide6 folder whose web engine data are links to the installed files."""
    pyside = tmp_path / "PySide6"
    for source, rel in ((RESOURCES, "Qt/resources"), (LOCALES, build.WEBENGINE_LOCALES_DIR)):
        folder = pyside / rel
        folder.mkdir(parents=True)
        for item in source.iterdir():
            (folder / item.name).symlink_to(item)
    return pyside


@pytest.mark.skipif(not LOCALES.is_dir(), reason="PySide6-Addons (QtWebEngine) not installed")
def test_devtools_and_other_locales_are_left_out(tmp_path: Path) -> None:
    pyside = _linked_tree(tmp_path)
    devtools = RESOURCES / "qtwebengine_devtools_resources.pak"
    others = [p for p in LOCALES.glob("*.pak") if p.name != "en-US.pak"]
    expected = (devtools.stat().st_size + sum(p.stat().st_size for p in others)) // 1024
    removed = build._prune_webengine(pyside)
    assert abs(removed - expected) <= len(others) + 1  # KiB rounded per file
    assert not (pyside / build.WEBENGINE_DEVTOOLS).exists()
    assert sorted(p.name for p in (pyside / build.WEBENGINE_LOCALES_DIR).iterdir()) == ["en-US.pak"]
    kept = sorted(p.name for p in (pyside / "Qt" / "resources").iterdir())
    assert "qtwebengine_resources.pak" in kept and "icudtl.dat" in kept


@pytest.mark.slow  # a real server and the web engine, in a process of its own
@pytest.mark.skipif(not LOCALES.is_dir(), reason="PySide6-Addons (QtWebEngine) not installed")
def test_a_view_runs_on_the_pruned_engine_in_another_locale(tmp_path: Path) -> None:
    pyside = _linked_tree(tmp_path)
    build._prune_webengine(pyside)
    env = {
        **os.environ,
        "QTWEBENGINE_RESOURCES_PATH": str(pyside / "Qt" / "resources"),
        "QTWEBENGINE_LOCALES_PATH": str(pyside / build.WEBENGINE_LOCALES_DIR),
        "LANG": "de_DE.UTF-8",  # Chromium has no de.pak now: it must fall back to en-US
    }
    env.pop("LC_ALL", None)
    env.pop("LC_MESSAGES", None)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:randomly",
            "-p",
            "no:cacheprovider",
            str(ROOT / "tests" / "ui" / "views" / "test_view_pane.py"),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "1 passed" in proc.stdout
