"""What a sandboxed server needs of the machine to start: its own install and caches.

A program's install is the prefix its executable lives in (``<prefix>/bin/x`` ->
``<prefix>``: a venv, a Node or Python install), followed through symlinks; a script it
is handed (``node dist/index.js``, ``python server.py``) brings its folder, or the
outermost ``node_modules`` it lies in. ``npx`` / ``npm`` get the npm cache and ``uv`` /
``uvx`` the uv cache, tool and Python folders, writable (``npx -y`` and ``uvx`` install
into them). The person's home itself, ``~/.local`` (only its ``bin`` and ``lib``) and
``/`` are never bound whole.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from portico.config.sandbox_paths import leads_out

SCRIPT_SUFFIXES = (".js", ".mjs", ".cjs", ".ts", ".py", ".pyz")
NPM_COMMANDS = ("npx", "npm", "pnpm", "pnpx", "yarn")
UV_COMMANDS = ("uv", "uvx")
# Version managers keep every runtime (and the shims that pick one) under one folder in
# the home: a command there needs that whole folder. (Not ~/.cargo: it holds credentials.)
MANAGERS = (".pyenv", ".nvm", ".volta", ".asdf", ".bun", ".deno")


@dataclass(frozen=True)
class Needs:
    read: tuple[str, ...]
    write: tuple[str, ...]  # the package caches it writes (``caches`` gives it its own)
    # (cache, variable, subfolder): where no overlay can be had, ``variable`` points the
    # tool at the server's own copy of ``cache`` (its ``subfolder``)
    cache_env: tuple[tuple[str, str, str], ...] = ()


def _prefix(executable: str) -> str:
    folder = os.path.dirname(executable)
    return os.path.dirname(folder) if os.path.basename(folder) in ("bin", "sbin") else folder


def _script_root(path: str) -> str:
    parts = Path(path).parts
    if "node_modules" in parts:
        return str(Path(*parts[: parts.index("node_modules") + 1]))
    return os.path.dirname(path)


def _never_whole(path: str, home: str) -> bool:
    """``/``, the home, and ``~/.local``: a user prefix shared with data of every kind
    (keyrings, other tools' state), so only its ``bin`` and ``lib`` are an install."""
    shared = ("/", os.path.normpath(home), os.path.join(os.path.normpath(home), ".local"))
    return os.path.normpath(path) in shared


def _manager_root(path: str, home: str) -> str | None:
    for name in MANAGERS:
        root = os.path.join(os.path.normpath(home), name)
        if path.startswith(root + os.sep):
            return root
    return None


def _add(out: list[str], path: str, home: str, fallback: str | None = None) -> None:
    chosen = fallback if _never_whole(path, home) and fallback else path
    if chosen and not _never_whole(chosen, home) and chosen not in out:
        out.append(chosen)


def install_needs(
    executable: str,
    args: Sequence[str],
    *,
    cwd: str | None,
    env: Mapping[str, str],
    home: str,
    confined: str | None = None,
) -> Needs:
    """The paths ``executable args`` needs to start, read-only and writable. With
    ``confined`` (a project server's folder) a script in it that is a link out of it
    brings nothing (``launch.links_out`` says so)."""
    read: list[str] = []
    write: list[str] = []
    for path in dict.fromkeys((executable, os.path.realpath(executable))):
        manager = _manager_root(path, home)
        if manager is not None:
            _add(read, manager, home)
            continue
        prefix = _prefix(path)
        if _never_whole(prefix, home) and prefix != "/":
            for part in ("bin", "lib"):
                _add(read, os.path.join(prefix, part), home)
        else:
            _add(read, prefix, home, fallback=path)
    for arg in args:
        if not arg.endswith(SCRIPT_SUFFIXES):
            continue
        given = Path(os.path.expanduser(arg))
        if not given.is_absolute() and cwd:
            given = Path(cwd) / given
        if not given.is_file():
            continue
        if confined is not None and leads_out(str(given), confined) is not None:
            continue
        for path in dict.fromkeys((str(given), os.path.realpath(given))):
            _add(read, _script_root(path), home, fallback=path)
    name = os.path.basename(executable)
    cache_env: list[tuple[str, str, str]] = []
    if name in NPM_COMMANDS:
        write.append(env.get("npm_config_cache") or os.path.join(home, ".npm"))
        cache_env.append((write[-1], "npm_config_cache", ""))
    if name in UV_COMMANDS:
        write.append(env.get("UV_CACHE_DIR") or os.path.join(home, ".cache", "uv"))
        cache_env.append((write[-1], "UV_CACHE_DIR", ""))
        write.append(env.get("UV_TOOL_DIR") or os.path.join(home, ".local", "share", "uv"))
        cache_env.append((write[-1], "UV_TOOL_DIR", "tools" if "UV_TOOL_DIR" not in env else ""))
        if "UV_TOOL_DIR" not in env:
            cache_env.append((write[-1], "UV_PYTHON_INSTALL_DIR", "python"))
    return Needs(tuple(read), tuple(write), tuple(cache_env))
