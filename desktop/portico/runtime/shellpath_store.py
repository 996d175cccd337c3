"""The login shell's PATH remembered on disk for a short time, so that each ``portico``
command does not start the person's login shell again (0.4–0.7 s with a plain bash).

An entry is keyed by what the shell's answer depends on: the shell (path, size, mtime),
the PATH and HOME it inherits, and the size and mtime of every startup file a login shell
reads (bash, zsh, ksh, fish, /etc/profile.d, macOS's /etc/paths). Editing any of them, or
``MAX_AGE`` passing, makes the next process ask the shell again; a command not found on a
remembered PATH does too (the transport factory asks :func:`shellpath.relearn`).
Only a PATH the shell really printed is kept: a timeout or failure is asked again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

MAX_AGE = 600.0  # seconds
MAX_ENTRIES = 16
FILE_NAME = "login-path.json"

_HOME_FILES = (
    ".profile",
    ".bash_profile",
    ".bash_login",
    ".bashrc",
    ".kshrc",
    ".mkshrc",
    ".config/fish/config.fish",
    ".config/fish/conf.d",
)
_ZSH_FILES = (".zshenv", ".zprofile", ".zshrc", ".zlogin")
_SYSTEM_FILES = (
    "/etc/profile",
    "/etc/profile.d",
    "/etc/bash.bashrc",
    "/etc/bashrc",
    "/etc/environment",
    "/etc/zshenv",
    "/etc/zprofile",
    "/etc/zshrc",
    "/etc/zlogin",
    "/etc/zsh/zshenv",
    "/etc/zsh/zprofile",
    "/etc/zsh/zshrc",
    "/etc/zsh/zlogin",
    "/etc/paths",
    "/etc/paths.d",
    "/etc/fish/config.fish",
)


def _stamp(path: Path) -> str:
    try:
        st = path.stat()
    except OSError:
        return f"{path}:-"
    return f"{path}:{st.st_size}:{st.st_mtime_ns}"


def fingerprint(shell: str, env: Mapping[str, str]) -> str:
    """A digest of everything the login shell's PATH depends on."""
    home = Path(env.get("HOME") or os.path.expanduser("~"))
    zdot = Path(env.get("ZDOTDIR") or home)
    files = [Path(shell)]
    files += [home / name for name in _HOME_FILES]
    files += [zdot / name for name in _ZSH_FILES]
    files += [Path(name) for name in _SYSTEM_FILES]
    parts = [shell, env.get("PATH", os.defpath), str(home), str(zdot)]
    parts += [_stamp(path) for path in files]
    return hashlib.sha256("\0".join(parts).encode("utf-8", "surrogatepass")).hexdigest()


def _read(file: Path) -> dict[str, dict[str, object]]:
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def recall(file: Path | None, key: str, *, now: float | None = None) -> tuple[str, float] | None:
    """(the remembered PATH, its age in seconds), or None when absent or too old."""
    if file is None:
        return None
    return _fresh(_read(file).get(key), time.time() if now is None else now)


def _fresh(entry: object, now: float) -> tuple[str, float] | None:
    if not isinstance(entry, dict):
        return None
    path, asked = entry.get("path"), entry.get("asked")
    if not isinstance(path, str) or not path or not isinstance(asked, int | float):
        return None
    age = now - float(asked)
    return (path, age) if 0 <= age < MAX_AGE else None


def remember(file: Path | None, key: str, path: str, *, now: float | None = None) -> None:
    """Keep ``path`` for ``key`` (with the other entries still fresh, newest 16)."""
    if file is None:
        return
    stamp = time.time() if now is None else now
    ages: dict[str, float] = {}
    for k, v in _read(file).items():
        kept = _fresh(v, stamp)
        if kept is not None:
            ages[k] = kept[1]
    ages[key] = 0.0
    newest = sorted(ages, key=ages.__getitem__)[:MAX_ENTRIES]
    entries = _read(file)
    entries[key] = {"path": path, "asked": stamp}
    _write(file, {k: entries[k] for k in newest})


def forget(file: Path | None, key: str) -> None:
    if file is None or not file.exists():
        return
    entries = _read(file)
    if entries.pop(key, None) is not None:
        _write(file, entries)


def _write(file: Path, entries: dict[str, dict[str, object]]) -> None:
    """Atomically (a reader never sees half a file); a cache that cannot be written is
    only slower."""
    with contextlib.suppress(OSError):
        file.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".login-path-", dir=file.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(entries, out)
            os.replace(tmp, file)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise


def default_file() -> Path | None:
    """``<cache dir>/login-path.json`` (PORTICO_HOME's cache under tests)."""
    from portico.paths import paths

    try:
        return paths().cache_dir / FILE_NAME
    except Exception:  # platformdirs without a usable home: no disk cache
        return None
