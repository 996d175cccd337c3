"""The package caches a sandboxed server writes: its own copy, never the person's.

``npx -y`` and ``uvx`` write into the npm and uv caches, and an unsandboxed ``npx`` or
``uvx`` later runs what it finds there (``~/.npm/_npx/<hash>/node_modules`` is code,
``~/.local/share/uv`` holds tools and Python installs). A sandboxed server that could
write the person's cache could leave code that runs later with all of their rights. So
each cache a sandboxed server needs is its own: under bwrap an overlay whose lower layer
is the person's cache (read-only: what is cached there starts with no download) and
whose upper layer is a folder of that server's alone, kept between its runs
(``<cache dir>/sandbox/<server>-<digest>/<cache>``); where there is no overlay (Landlock,
macOS, an old bwrap) that folder alone, empty at first, is the cache the tool is
pointed at (``npm_config_cache``, ``UV_CACHE_DIR`` ...).
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

from portico.config.model import ServerSpec
from portico.paths import paths


@dataclass(frozen=True)
class PrivateCache:
    """One cache: where the tool expects it (``real``), and the server's own layer."""

    real: str
    upper: str
    work: str  # overlayfs' work folder, beside upper on the same file system


def server_cache_root(spec: ServerSpec) -> Path:
    """The folder holding this server's private caches (per config file and name)."""
    digest = hashlib.sha256(f"{spec.source.path}\0{spec.name}".encode()).hexdigest()[:16]
    slug = re.sub(r"[^A-Za-z0-9_.-]", "_", spec.name)[:40]
    return paths().cache_dir / "sandbox" / f"{slug}-{digest}"


def private_caches(spec: ServerSpec, caches: tuple[str, ...]) -> tuple[PrivateCache, ...]:
    """This server's layer for each of ``caches`` (made now, empty the first time)."""
    root = server_cache_root(spec)
    found = []
    for real in caches:
        key = hashlib.sha256(os.path.normpath(real).encode()).hexdigest()[:12]
        name = re.sub(r"[^A-Za-z0-9_.-]", "_", os.path.basename(os.path.normpath(real)))
        folder = root / f"{name.lstrip('.') or 'cache'}-{key}"
        upper, work = folder / "upper", folder / "work"
        for path in (upper, work):
            path.mkdir(parents=True, exist_ok=True, mode=0o700)
        found.append(PrivateCache(os.path.normpath(real), str(upper), str(work)))
    return tuple(found)


def overlay_args(caches: tuple[PrivateCache, ...]) -> list[str]:
    """bwrap arguments mounting each cache as the person's (read-only) under the
    server's own layer; a cache the person does not have yet is the layer alone."""
    args: list[str] = []
    for cache in caches:
        if os.path.isdir(cache.real):
            args += ["--overlay-src", cache.real, "--overlay", cache.upper, cache.work, cache.real]
        else:
            args += ["--bind", cache.upper, cache.real]
    return args
