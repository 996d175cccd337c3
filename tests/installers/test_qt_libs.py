"""The pre-Qt platform check: missing system libraries are named with the install command."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from portico.cli import qt_libs

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ELF/X11 only")

PLUGINS = qt_libs.qt_plugins_dir()
XCB = PLUGINS / "platforms" / "libqxcb.so" if PLUGINS else None
REMOVED = ("libxcb-cursor.so", "libxcb-icccm.so", "libxcb-keysyms.so")


def _library_path_without_xcb_utils(tmp_path: Path) -> list[str]:
    """A copy (as symlinks) of every system library directory, less the xcb helpers that
    a fresh desktop install lacks."""
    out = tmp_path / "lib"
    out.mkdir()
    for folder in qt_libs.system_dirs({}):
        root = Path(folder)
        if not root.is_dir():
            continue
        for entry in root.iterdir():
            if entry.name.startswith(REMOVED) or (out / entry.name).exists():
                continue
            if ".so" in entry.name:
                (out / entry.name).symlink_to(entry)
    return [str(out)]


def test_missing_xcb_libraries_are_named_with_the_apt_command(tmp_path: Path) -> None:
    assert XCB is not None and XCB.is_file(), "PySide6's xcb plugin is not installed"
    search = _library_path_without_xcb_utils(tmp_path)
    result = qt_libs.check({"DISPLAY": ":0"}, search=search)
    assert result is not None and result.plugin == "xcb"
    for soname in ("libxcb-cursor.so.0", "libxcb-icccm.so.4", "libxcb-keysyms.so.1"):
        assert soname in result.missing
    debian = qt_libs.Distro("debian", "apt")
    text = qt_libs.message(result, debian)
    assert "libxcb-cursor.so.0, libxcb-icccm.so.4, libxcb-keysyms.so.1" in text
    assert "apt-get install -y libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1" in text
    assert "Could not load the Qt platform plugin" not in text
    fedora = qt_libs.message(result, qt_libs.Distro("fedora", "dnf"))
    assert "dnf install -y xcb-util-cursor xcb-util-wm xcb-util-keysyms" in fedora
    arch = qt_libs.message(result, qt_libs.Distro("arch", "pacman"))
    assert "pacman -S --needed xcb-util-cursor xcb-util-wm xcb-util-keysyms" in arch


def test_the_check_agrees_with_the_dynamic_loader() -> None:
    """What ldd reports missing for the xcb plugin (with Qt's own lib dir) is what we find."""
    assert XCB is not None
    if shutil.which("ldd") is None:
        pytest.skip("no ldd")
    out = subprocess.run(["ldd", str(XCB)], capture_output=True, text=True, check=True).stdout
    ldd_missing = {line.split()[0] for line in out.splitlines() if "not found" in line}
    result = qt_libs.check({"DISPLAY": ":0"})
    ours = set(result.missing) if result else set()
    assert ours == ldd_missing


def test_wayland_session_falls_back_to_xcb_and_offscreen_is_not_checked(tmp_path: Path) -> None:
    search = _library_path_without_xcb_utils(tmp_path)
    assert qt_libs.check({"QT_QPA_PLATFORM": "offscreen"}, search=search) is None
    assert qt_libs.check({}, search=search) is None  # no display: another message says so
    # Wayland first; its plugin needs none of the removed libraries, so it can load.
    wayland_ok = not qt_libs.missing_libraries(
        XCB.parent / "libqwayland.so",
        search,  # type: ignore[union-attr]
    )
    result = qt_libs.check({"WAYLAND_DISPLAY": "wayland-0", "DISPLAY": ":0"}, search=search)
    assert (result is None) == wayland_ok


def test_distribution_is_read_from_os_release(tmp_path: Path) -> None:
    release = tmp_path / "os-release"
    release.write_text('ID=ubuntu\nID_LIKE="debian"\n', encoding="utf-8")
    assert qt_libs.detect_distro(release).family == "debian"
    release.write_text('ID="rocky"\nID_LIKE="rhel centos fedora"\n', encoding="utf-8")
    assert qt_libs.detect_distro(release).family == "fedora"
    release.write_text("ID=manjaro\nID_LIKE=arch\n", encoding="utf-8")
    assert qt_libs.detect_distro(release).family == "arch"


def test_the_launcher_prints_the_message_before_qt_starts(tmp_path: Path) -> None:
    """Run the real entry point in a process whose loader cannot see the xcb helpers: one
    message and exit 1, no Qt abort. (Only where the machine itself lacks them.)"""
    assert XCB is not None
    if qt_libs.check({"DISPLAY": ":0"}) is None:
        pytest.skip("this machine has every xcb library; the in-process test covers the rest")
    # A display that accepts connections (an abstract socket where X would listen), so the
    # launcher's earlier check for a dead display passes and the library check speaks.
    number = next(n for n in range(90, 200) if not Path(f"/tmp/.X11-unix/X{n}").exists())
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as display:
        display.bind(f"\0/tmp/.X11-unix/X{number}")
        display.listen(4)
        env = {k: v for k, v in os.environ.items() if k != "QT_QPA_PLATFORM"}
        env.update(DISPLAY=f":{number}", PORTICO_HOME=str(tmp_path))
        env.pop("WAYLAND_DISPLAY", None)
        proc = subprocess.run(
            [sys.executable, "-m", "portico.cli.desktop"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert proc.returncode == 1
    assert "needs system libraries that are not installed" in proc.stderr
    assert "apt-get install -y" in proc.stderr or "install" in proc.stderr
    assert "qt.qpa" not in proc.stderr and "Aborted" not in proc.stderr
