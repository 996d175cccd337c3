"""Start at login: the XDG autostart entry round-trips; the menu item follows the file."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from portico.ui.autostart import MacLaunchAgent, XdgAutostart, launch_command, login_item

COMMAND = ["/opt/Portico Test/bin/portico-desktop", "--hidden"]


def test_xdg_autostart_on_off_round_trips(tmp_path: Path) -> None:
    config = tmp_path / "xdg-config"
    item = XdgAutostart(COMMAND, {"XDG_CONFIG_HOME": str(config)})
    assert item.path == config / "autostart" / "org.portico.portico.desktop"
    assert not item.enabled()
    item.set_enabled(False)  # off when already off: nothing to do, no error
    assert not item.path.exists()
    item.set_enabled(True)
    assert item.enabled()
    text = item.path.read_text(encoding="utf-8")
    assert 'Exec="/opt/Portico Test/bin/portico-desktop" --hidden\n' in text
    assert "Type=Application\n" in text and "Name=Portico\n" in text
    item.set_enabled(True)  # twice on: the same single entry
    assert item.path.read_text(encoding="utf-8") == text
    assert [p.name for p in item.path.parent.iterdir()] == ["org.portico.portico.desktop"]
    item.set_enabled(False)
    assert not item.enabled() and not item.path.exists()
    item.set_enabled(True)
    assert item.path.read_text(encoding="utf-8") == text


def test_the_entry_is_a_valid_desktop_file(tmp_path: Path) -> None:
    if shutil.which("desktop-file-validate") is None:
        pytest.skip("desktop-file-validate is not installed (apt-get install desktop-file-utils)")
    item = XdgAutostart(COMMAND, {"XDG_CONFIG_HOME": str(tmp_path)})
    item.set_enabled(True)
    proc = subprocess.run(
        ["desktop-file-validate", str(item.path)], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_turned_off_in_the_desktop_settings_reads_as_off(tmp_path: Path) -> None:
    item = XdgAutostart(COMMAND, {"XDG_CONFIG_HOME": str(tmp_path)})
    item.set_enabled(True)
    item.path.write_text(item.path.read_text() + "Hidden=true\n", encoding="utf-8")
    assert not item.enabled()
    item.set_enabled(True)  # turning it on again writes our entry back
    assert item.enabled()


def test_macos_launch_agent_round_trips(tmp_path: Path) -> None:
    agent = MacLaunchAgent(COMMAND, home=tmp_path)
    assert not agent.enabled()
    agent.set_enabled(True)
    assert agent.enabled()
    assert agent.path == tmp_path / "Library/LaunchAgents/org.portico.portico.plist"
    assert b"<string>--hidden</string>" in agent.path.read_bytes()
    agent.set_enabled(False)
    assert not agent.enabled() and not agent.path.exists()


def test_the_login_item_starts_the_app_hidden() -> None:
    assert launch_command()[-1] == "--hidden"
    assert isinstance(login_item("linux", COMMAND), XdgAutostart)
    assert isinstance(login_item("darwin", COMMAND), MacLaunchAgent)


def test_the_menu_item_follows_and_sets_the_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, qtbot
) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtWidgets import QWidget

    from portico.ui.login_setting import StartAtLoginAction

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    parent = QWidget()
    qtbot.addWidget(parent)
    action = StartAtLoginAction(parent, XdgAutostart(COMMAND))
    assert not action.isChecked()
    action.trigger()  # what a click on the menu item does
    entry = tmp_path / "autostart" / "org.portico.portico.desktop"
    assert action.isChecked() and entry.is_file()
    entry.unlink()  # removed in the desktop's own settings
    action.hover()
    assert not action.isChecked()
    action.trigger()
    action.trigger()
    assert not action.isChecked() and not entry.exists()
