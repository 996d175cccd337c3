"""Where each client keeps its MCP config, per platform (Linux, macOS, Windows)."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Machine:
    """The facts a default location depends on (tests pass their own)."""

    platform: str  # sys.platform spelling: "linux", "darwin", "win32"
    home: Path
    environ: Mapping[str, str]

    @classmethod
    def current(cls) -> Machine:
        return cls(sys.platform, Path.home(), os.environ)

    @property
    def is_windows(self) -> bool:
        return self.platform.startswith("win")

    @property
    def is_macos(self) -> bool:
        return self.platform == "darwin"

    def app_config_dir(self) -> Path:
        """Where desktop apps keep per-user settings (Roaming AppData, Application
        Support, XDG config)."""
        if self.is_windows:
            appdata = self.environ.get("APPDATA")
            return Path(appdata) if appdata else self.home / "AppData" / "Roaming"
        if self.is_macos:
            return self.home / "Library" / "Application Support"
        xdg = self.environ.get("XDG_CONFIG_HOME")
        return Path(xdg) if xdg else self.home / ".config"
