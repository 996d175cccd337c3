"""Start at login (into the tray), through each platform's own mechanism.

- Linux and other XDG desktops: ``$XDG_CONFIG_HOME/autostart/org.portico.portico.desktop``.
- macOS: a per-user LaunchAgent, ``~/Library/LaunchAgents/org.portico.portico.plist``
  (``RunAtLoad``), which System Settings lists under Login Items.
- Windows: the ``Portico`` value under ``HKCU\\Software\\Microsoft\\Windows\\CurrentVersion\\Run``.

The entry itself is the setting: ``enabled()`` reads it back, so turning it off in the
desktop's own settings is seen here. Plain Python (no Qt), so the CLI could use it too.
"""

from __future__ import annotations

import contextlib
import os
import plistlib
import shutil
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

LABEL = "org.portico.portico"
RUN_KEY = r"Software\Microsoft\Windows\CurrentVersion\Run"
RUN_VALUE = "Portico"


class LoginItem(Protocol):
    def enabled(self) -> bool: ...
    def set_enabled(self, on: bool) -> None: ...


def launch_command() -> list[str]:
    """How the login item starts Portico: the installed launcher if there is one, else
    this interpreter running the launcher module; always into the tray."""
    launcher = shutil.which("portico-desktop")
    base = [launcher] if launcher else [sys.executable, "-m", "portico.cli.desktop"]
    return [*base, "--hidden"]


def _desktop_quote(word: str) -> str:
    """Quote one Exec argument as the Desktop Entry spec asks."""
    if word and not any(c in word for c in " \t\n\"'\\><~|&;$*?#()`%="):
        return word
    escaped = word.replace("\\", "\\\\").replace('"', '\\"').replace("`", "\\`")
    escaped = escaped.replace("$", "\\$").replace("%", "%%")
    return f'"{escaped}"'


class XdgAutostart:
    def __init__(self, command: Sequence[str], environ: Mapping[str, str] | None = None) -> None:
        env = os.environ if environ is None else environ
        config = env.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
        self.path = Path(config) / "autostart" / "org.portico.portico.desktop"
        self.command = list(command)

    def text(self) -> str:
        exec_line = " ".join(_desktop_quote(w) for w in self.command)
        return (
            "[Desktop Entry]\n"
            "Type=Application\n"
            "Name=Portico\n"
            "Comment=Start Portico in the system tray at login\n"
            f"Exec={exec_line}\n"
            "Icon=org.portico.portico\n"
            "Terminal=false\n"
            "X-GNOME-Autostart-enabled=true\n"
        )

    def enabled(self) -> bool:
        try:
            text = self.path.read_text(encoding="utf-8")
        except OSError:
            return False
        lines = {line.strip().lower() for line in text.splitlines()}
        return "hidden=true" not in lines and "x-gnome-autostart-enabled=false" not in lines

    def set_enabled(self, on: bool) -> None:
        if not on:
            self.path.unlink(missing_ok=True)
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        partial = self.path.with_name(f".{self.path.name}.tmp")
        partial.write_text(self.text(), encoding="utf-8")
        os.replace(partial, self.path)


class MacLaunchAgent:
    def __init__(self, command: Sequence[str], home: Path | None = None) -> None:
        self.path = (home or Path.home()) / "Library" / "LaunchAgents" / f"{LABEL}.plist"
        self.command = list(command)

    def data(self) -> bytes:
        return plistlib.dumps({"Label": LABEL, "ProgramArguments": self.command, "RunAtLoad": True})

    def enabled(self) -> bool:
        try:
            with self.path.open("rb") as handle:
                return bool(plistlib.load(handle).get("RunAtLoad"))
        except (OSError, plistlib.InvalidFileException):
            return False

    def set_enabled(self, on: bool) -> None:
        if not on:
            self.path.unlink(missing_ok=True)
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        partial = self.path.with_name(f".{self.path.name}.tmp")
        partial.write_bytes(self.data())
        os.replace(partial, self.path)


class WindowsRunKey:
    def __init__(self, command: Sequence[str]) -> None:
        self.command = list(command)

    def value(self) -> str:
        import subprocess

        return subprocess.list2cmdline(self.command)

    def enabled(self) -> bool:
        winreg = _winreg()
        try:
            with winreg.OpenKey(winreg.HKEY_CURRENT_USER, RUN_KEY) as key:
                winreg.QueryValueEx(key, RUN_VALUE)
        except OSError:
            return False
        return True

    def set_enabled(self, on: bool) -> None:
        winreg = _winreg()
        with winreg.CreateKey(winreg.HKEY_CURRENT_USER, RUN_KEY) as key:
            if on:
                winreg.SetValueEx(key, RUN_VALUE, 0, winreg.REG_SZ, self.value())
            else:
                with contextlib.suppress(FileNotFoundError):
                    winreg.DeleteValue(key, RUN_VALUE)


def _winreg() -> Any:
    """The registry module (Windows only; typed loosely so every platform type-checks)."""
    import importlib

    return importlib.import_module("winreg")


def login_item(platform: str = sys.platform, command: Sequence[str] | None = None) -> LoginItem:
    cmd = list(command) if command is not None else launch_command()
    if platform == "darwin":
        return MacLaunchAgent(cmd)
    if platform.startswith("win"):
        return WindowsRunKey(cmd)
    return XdgAutostart(cmd)
