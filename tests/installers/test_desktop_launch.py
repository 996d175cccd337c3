"""The launcher's arguments and its display check (both before Qt is imported)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

from portico.cli.desktop import display_unreachable, is_desktop_invocation, parse_args


def test_desktop_arguments_from_the_menu_entry_and_the_login_item() -> None:
    assert is_desktop_invocation([])
    assert is_desktop_invocation(["portico://add?name=x&url=https://h"])
    assert is_desktop_invocation(["--open-url", "portico://add"])
    assert is_desktop_invocation(["--hidden"])
    assert not is_desktop_invocation(["mcp", "list"])
    assert parse_args(["portico://add?name=x"]).open_url == "portico://add?name=x"
    assert parse_args(["--open-url", "portico://add?name=y"]).open_url == "portico://add?name=y"
    assert parse_args([]).open_url is None  # the menu entry's %u with no link
    assert parse_args(["--hidden"]).hidden


def test_a_display_nobody_listens_on_is_named(tmp_path: Path) -> None:
    text = display_unreachable({"DISPLAY": ":6123"})
    assert text is not None and "X display :6123" in text and "/tmp/.X11-unix/X6123" in text
    wayland = display_unreachable({"WAYLAND_DISPLAY": "wl-test", "XDG_RUNTIME_DIR": str(tmp_path)})
    assert wayland is not None and str(tmp_path / "wl-test") in wayland
    assert display_unreachable({"DISPLAY": ":6123", "QT_QPA_PLATFORM": "offscreen"}) is None
    assert display_unreachable({"DISPLAY": "remote.example:0"}) is None  # Qt's to try


def test_a_listening_wayland_socket_passes(tmp_path: Path) -> None:
    path = tmp_path / "wl-0"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(str(path))
        server.listen(1)
        env = {"WAYLAND_DISPLAY": "wl-0", "XDG_RUNTIME_DIR": str(tmp_path), "DISPLAY": ":6123"}
        assert display_unreachable(env) is None


def test_portico_with_a_dead_display_says_so_without_qt(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "portico.cli.main"],
        env={"PATH": "/usr/bin:/bin", "DISPLAY": ":6123", "PORTICO_HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1
    assert "nothing listens on the X display :6123" in proc.stderr
    assert "qt.qpa" not in proc.stderr


def test_a_bad_link_is_refused_before_any_window(tmp_path: Path) -> None:
    """`portico --open-url` with a link that does not parse says why and exits 2 (it
    opened the app, which only logged it, and the command ended 0 without a word)."""
    env = {**os.environ, "PORTICO_HOME": str(tmp_path), "QT_QPA_PLATFORM": "offscreen"}
    proc = subprocess.run(
        [sys.executable, "-m", "portico.cli.main", "--open-url", "portico://nonsense?x=1"],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("portico: cannot open the link: unknown link action")
    assert "portico://add?name=NAME" in proc.stderr


def test_project_arguments_open_the_app_on_that_project(tmp_path: Path) -> None:
    """`portico --project DIR` opens the app (it was a usage error), and without it the
    app opens the project it is started in (issue 26, item 15)."""
    from portico.cli.desktop import start_project

    (tmp_path / "proj" / ".portico").mkdir(parents=True)
    (tmp_path / "proj" / "src" / "deep").mkdir(parents=True)
    assert is_desktop_invocation(["--project", "proj"])
    assert is_desktop_invocation(["--project=proj", "--hidden"])
    assert not is_desktop_invocation(["--project", "proj", "mcp", "list"])
    assert start_project(parse_args(["--project", "proj"]), tmp_path) == tmp_path / "proj"
    started_in = tmp_path / "proj" / "src" / "deep"
    assert start_project(parse_args([]), started_in) == tmp_path / "proj"
    assert start_project(parse_args([]), tmp_path) is None  # no project here: the last one


def test_a_missing_project_folder_is_refused_before_any_window(tmp_path: Path) -> None:
    env = {**os.environ, "PORTICO_HOME": str(tmp_path), "QT_QPA_PLATFORM": "offscreen"}
    proc = subprocess.run(
        [sys.executable, "-m", "portico.cli.main", "--project", str(tmp_path / "nope")],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert f"cannot open the project {tmp_path / 'nope'}: no such folder" in proc.stderr
