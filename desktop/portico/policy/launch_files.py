"""The project files a stdio launch names, pinned by their content.

A trust decision about a project server binds to its config text, but the command often
runs a file from the project itself (``node ./server.js``, ``python -m tools.serve``,
``NODE_OPTIONS=--require ./.portico/telemetry.js``). Editing that file runs new code, so
the decision binds to those files' contents too (``pinned_files``): a change asks again.

What counts as named: a token of the command, an argument or an env value (split the way a
shell would, and the part after ``=`` of ``--flag=path`` / ``NAME=path``) that is an
existing regular file inside the project folder, taken relative to the launch's working
folder; and the module after ``-m`` (``pkg.mod`` -> ``pkg/mod.py``, a package's
``__main__.py``). Only such files are read, so a launch that names none costs a few
``stat`` calls. Each file is hashed in 1 MiB blocks up to :data:`MAX_BYTES`; a bigger one
is pinned by its size and change time instead, and at most :data:`MAX_FILES` are pinned.
"""

from __future__ import annotations

import hashlib
import os
import shlex
from dataclasses import dataclass
from pathlib import Path

from portico.config.model import Scope, ServerSpec, Transport

MAX_BYTES = 8 * 1024 * 1024
MAX_FILES = 32
_BLOCK = 1024 * 1024


@dataclass(frozen=True)
class PinnedFile:
    path: str  # relative to the project folder, with "/" separators
    size: int
    digest: str  # sha256 of the content, or "size+mtime:<ns>" for a file over MAX_BYTES

    @property
    def line(self) -> str:
        """How a review shows it: ``.portico/telemetry.js (1,234 bytes, sha256 ab12cd34…)``."""
        if self.digest.startswith("sha256:"):
            how = f"sha256 {self.digest[7:19]}"
        else:
            how = f"over {MAX_BYTES // (1024 * 1024)} MiB: pinned by size and change time"
        return f"{self.path} ({self.size:,} bytes, {how})"


def _project(spec: ServerSpec) -> Path:
    folder = spec.source.path.parent
    if folder.name == ".portico":
        folder = folder.parent
    return folder


def _tokens(text: str) -> list[str]:
    try:
        words = shlex.split(text)
    except ValueError:
        words = text.split()
    out: list[str] = []
    for word in words:
        out.append(word)
        if "=" in word:
            out.append(word.split("=", 1)[1])
    return out


def _module_files(base: Path, module: str) -> list[Path]:
    parts = [p for p in module.split(".") if p]
    if not parts:
        return []
    folder = base.joinpath(*parts)
    return [folder.with_suffix(".py"), folder / "__main__.py", folder / "__init__.py"]


def named_paths(spec: ServerSpec) -> list[Path]:
    """Every existing file inside the project folder that the launch names, in order."""
    if spec.transport is not Transport.STDIO or spec.source.scope is not Scope.PROJECT:
        return []
    project = _project(spec).resolve()
    cwd = Path(os.path.expanduser(spec.cwd)) if spec.cwd else project
    if not cwd.is_absolute():
        cwd = project / cwd
    words: list[str] = []
    for text in (spec.command or "", *spec.args, *(value for _, value in spec.env)):
        words += _tokens(text)
    found: list[Path] = []
    candidates: list[Path] = []
    for i, word in enumerate(words):
        if not word or word.startswith("${"):
            continue
        if i > 0 and words[i - 1] == "-m":
            candidates += _module_files(cwd, word)
        if word.startswith("-") and "=" not in word:
            continue
        candidates.append(Path(os.path.expanduser(word)))
    for candidate in candidates:
        path = candidate if candidate.is_absolute() else cwd / candidate
        try:
            if not path.is_file():
                continue
            real = path.resolve()
        except (OSError, ValueError):
            continue
        if real.is_relative_to(project) and real not in found:
            found.append(real)
            if len(found) >= MAX_FILES:
                break
    return found


def _digest(path: Path, size: int, mtime_ns: int) -> str:
    if size > MAX_BYTES:
        return f"size+mtime:{mtime_ns}"
    sha = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(_BLOCK):
            sha.update(block)
    return "sha256:" + sha.hexdigest()


def pinned_files(spec: ServerSpec) -> tuple[PinnedFile, ...]:
    """The project files ``spec``'s launch names, each with its content digest."""
    paths = named_paths(spec)
    if not paths:
        return ()
    project = _project(spec).resolve()
    pinned: list[PinnedFile] = []
    for path in paths:
        try:
            stat = path.stat()
            digest = _digest(path, stat.st_size, stat.st_mtime_ns)
        except OSError as exc:
            digest, size = f"unreadable:{exc.errno}", 0
        else:
            size = stat.st_size
        pinned.append(PinnedFile(path.relative_to(project).as_posix(), size, digest))
    return tuple(pinned)
