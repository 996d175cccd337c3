"""The PATH a login shell would give, so GUI-launched Portico finds npx, uvx, node.

A desktop app started by double-click inherits a minimal PATH. We ask the user's login
shell once (``$SHELL -ilc``, bounded by a timeout), cache the answer for the process and
search it (then our own PATH) for stdio commands.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import threading
from collections.abc import Mapping
from pathlib import Path

from portico.runtime.errors import CommandNotFound

SHELL_TIMEOUT = 5.0
_MARK = "__PORTICO_PATH__"
_cache: dict[str, str] = {}
_lock = threading.Lock()  # servers connecting at once ask the shell once, not N times


def _ask_shell(shell: str, timeout: float) -> str | None:
    script = f'printf "%s%s%s" "{_MARK}" "$PATH" "{_MARK}"'
    try:
        done = subprocess.run(
            [shell, "-ilc", script],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
            check=False,
            start_new_session=True,  # an interactive shell must not grab our terminal
        )
    except (OSError, subprocess.SubprocessError):
        return None
    out = done.stdout.decode("utf-8", "replace")
    parts = out.split(_MARK)
    if len(parts) < 3 or not parts[1].strip():
        return None
    return parts[1].strip()


def merge_paths(*paths: str) -> str:
    """Join PATH strings, keeping the first occurrence of each directory."""
    seen: list[str] = []
    for value in paths:
        for entry in value.split(os.pathsep):
            if entry and entry not in seen:
                seen.append(entry)
    return os.pathsep.join(seen)


def login_path(*, environ: Mapping[str, str] | None = None, timeout: float = SHELL_TIMEOUT) -> str:
    """The login shell's PATH merged before ours; computed once per shell, then cached."""
    env = os.environ if environ is None else environ
    shell = env.get("SHELL") or ""
    own = env.get("PATH", os.defpath)
    key = f"{shell}\0{own}"
    with _lock:
        if key not in _cache:
            found = _ask_shell(shell, timeout) if shell and os.name != "nt" else None
            _cache[key] = merge_paths(found, own) if found else own
        return _cache[key]


async def login_path_async(
    *, environ: Mapping[str, str] | None = None, shell_timeout: float = SHELL_TIMEOUT
) -> str:
    return await asyncio.to_thread(login_path, environ=environ, timeout=shell_timeout)


def clear_cache() -> None:
    _cache.clear()


def find_command(command: str, path: str, *, cwd: str | None = None, server: str = "") -> str:
    """The executable for ``command``; raises CommandNotFound naming the PATH searched."""
    who = f"{server}: " if server else ""
    if os.sep in command or (os.altsep and os.altsep in command):
        candidate = Path(command).expanduser()
        if not candidate.is_absolute() and cwd:
            candidate = Path(cwd) / candidate
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
        raise CommandNotFound(f"{who}command {command!r} not found or not executable ({candidate})")
    found = shutil.which(command, path=path)
    if found is None:
        raise CommandNotFound(
            f"{who}command {command!r} not found on PATH={path} "
            "(the login shell's PATH merged with Portico's); install it or give its full path"
        )
    return found
