"""The PATH a login shell would give, so GUI-launched Portico finds npx, uvx, node.

A desktop app started by double-click inherits a minimal PATH. We ask the user's login
shell (``$SHELL -ilc``, bounded by a timeout), cache the answer for the process and on
disk for a few minutes (:mod:`shellpath_store`: each ``portico`` command would otherwise
start the shell again), and search it (then our own PATH) for stdio commands.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import subprocess
import threading
from collections.abc import Mapping
from pathlib import Path

from portico.runtime import shellpath_store
from portico.runtime.errors import CommandNotFound

SHELL_TIMEOUT = 5.0
_MARK = "__PORTICO_PATH__"
_cache: dict[str, str] = {}
_origin: dict[str, str] = {}  # how the cached PATH was made, for messages
_remembered: set[str] = set()  # keys whose PATH came from the disk, not this process's shell
_lock = threading.Lock()  # servers connecting at once ask the shell once, not N times


def _ask_shell(shell: str, timeout: float) -> tuple[str | None, str]:
    """(the login shell's PATH or None, why not). A shell that hangs is killed with its
    whole process group, so nothing it started (a profile's ``sleep``, an agent) is left."""
    script = f'printf "%s%s%s" "{_MARK}" "$PATH" "{_MARK}"'
    try:
        proc = subprocess.Popen(
            [shell, "-ilc", script],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # an interactive shell must not grab our terminal
        )
    except OSError as exc:
        return None, f"the login shell {shell} could not start ({exc.strerror or exc})"
    try:
        raw, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        return None, f"the login shell {shell} gave no PATH within {timeout:g} s"
    finally:
        _kill_group(proc)  # a shell that exited may still have left children behind
        if proc.stdout is not None:
            proc.stdout.close()  # communicate() leaves it open when it timed out
    out = raw.decode("utf-8", "replace")
    parts = out.split(_MARK)
    if len(parts) < 3 or not parts[1].strip():
        return None, f"the login shell {shell} printed no PATH"
    return parts[1].strip(), ""


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=2.0)


def merge_paths(*paths: str) -> str:
    """Join PATH strings, keeping the first occurrence of each directory."""
    seen: list[str] = []
    for value in paths:
        for entry in value.split(os.pathsep):
            if entry and entry not in seen:
                seen.append(entry)
    return os.pathsep.join(seen)


def _key(env: Mapping[str, str]) -> str:
    return f"{env.get('SHELL') or ''}\0{env.get('PATH', os.defpath)}"


def login_path(
    *,
    environ: Mapping[str, str] | None = None,
    timeout: float = SHELL_TIMEOUT,
    store: Path | bool | None = True,
) -> str:
    """The login shell's PATH merged before ours; computed once per shell, then cached in
    the process and (``store``: True for the cache dir's file, a file, or False) on disk."""
    env = os.environ if environ is None else environ
    shell = env.get("SHELL") or ""
    own = env.get("PATH", os.defpath)
    key = _key(env)
    with _lock:
        if key not in _cache:
            _learn(key, shell, own, env, timeout, _store_file(store))
        return _cache[key]


def _learn(
    key: str,
    shell: str,
    own: str,
    env: Mapping[str, str],
    timeout: float,
    file: Path | None,
    *,
    from_disk: bool = True,
) -> None:
    if not shell or os.name == "nt":
        found, why = None, "no login shell (SHELL is not set)"
    else:
        digest = shellpath_store.fingerprint(shell, env)
        kept = shellpath_store.recall(file, digest) if from_disk else None
        if kept is not None:
            _remembered.add(key)
            _cache[key] = merge_paths(kept[0], own)
            _origin[key] = (
                f"the login shell's PATH (asked {kept[1] / 60:.0f} min ago) merged with Portico's"
            )
            return
        found, why = _ask_shell(shell, timeout)
        if found:
            shellpath_store.remember(file, digest, found)
    _remembered.discard(key)
    _cache[key] = merge_paths(found, own) if found else own
    _origin[key] = (
        "the login shell's PATH merged with Portico's" if found else f"Portico's own PATH; {why}"
    )


def relearn(
    *,
    environ: Mapping[str, str] | None = None,
    timeout: float = SHELL_TIMEOUT,
    store: Path | bool | None = True,
) -> bool:
    """Ask the shell again when the PATH in use was remembered from the disk (a command
    was not found on it: the person may have installed it since). True if it asked."""
    env = os.environ if environ is None else environ
    key = _key(env)
    with _lock:
        if key not in _remembered:
            return False
        shell, own, file = env.get("SHELL") or "", env.get("PATH", os.defpath), _store_file(store)
        shellpath_store.forget(file, shellpath_store.fingerprint(shell, env))
        _learn(key, shell, own, env, timeout, file, from_disk=False)
        return True


def _store_file(store: Path | bool | None) -> Path | None:
    if store is True:
        return shellpath_store.default_file()
    return store or None


def path_origin(*, environ: Mapping[str, str] | None = None) -> str:
    """How :func:`login_path` made its answer (for CommandNotFound)."""
    env = os.environ if environ is None else environ
    return _origin.get(_key(env), "Portico's own PATH")


async def login_path_async(
    *, environ: Mapping[str, str] | None = None, shell_timeout: float = SHELL_TIMEOUT
) -> str:
    return await asyncio.to_thread(login_path, environ=environ, timeout=shell_timeout)


async def relearn_async(
    *, environ: Mapping[str, str] | None = None, shell_timeout: float = SHELL_TIMEOUT
) -> bool:
    return await asyncio.to_thread(relearn, environ=environ, timeout=shell_timeout)


def clear_cache() -> None:
    """Forget this process's answers (the disk's stay: they have their own key)."""
    _cache.clear()
    _origin.clear()
    _remembered.clear()


def find_command(
    command: str,
    path: str,
    *,
    cwd: str | None = None,
    server: str = "",
    origin: str = "the login shell's PATH merged with Portico's",
) -> str:
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
            f"{who}command {command!r} not found on PATH={path} ({origin});"
            " install it or give its full path"
        )
    return found
