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
import stat
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


# Characters shlex treats apart from a plain space; a text without any splits on spaces
# exactly as shlex.split would (pure Python, and the costliest part of a 400-server check).
_SHELL_SPECIAL = frozenset("'\"\\\t\r\n\x0b\x0c")


def _tokens(text: str) -> list[str]:
    if text.isascii() and _SHELL_SPECIAL.isdisjoint(text):
        words = [w for w in text.split(" ") if w]
    else:
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


def _module_files(base: str, module: str) -> list[str]:
    parts = [p for p in module.split(".") if p]
    if not parts:
        return []
    folder = os.path.join(base, *parts)
    return [
        folder + ".py",
        os.path.join(folder, "__main__.py"),
        os.path.join(folder, "__init__.py"),
    ]


def named_paths(spec: ServerSpec) -> list[Path]:
    """Every existing file inside the project folder that the launch names, in order."""
    if spec.transport is not Transport.STDIO or spec.source.scope is not Scope.PROJECT:
        return []
    # Plain os.path on strings: a 400-server project checks every word of every launch.
    project = os.path.realpath(_project(spec))
    inside = project if project.endswith(os.sep) else project + os.sep
    cwd = os.path.join(project, os.path.expanduser(spec.cwd)) if spec.cwd else project
    words: list[str] = []
    for text in (spec.command or "", *spec.args, *(value for _, value in spec.env)):
        words += _tokens(text)
    found: list[str] = []
    candidates: list[str] = []
    for i, word in enumerate(words):
        if not word or word.startswith("${"):
            continue
        if i > 0 and words[i - 1] == "-m":
            candidates += _module_files(cwd, word)
        if word.startswith("-") and "=" not in word:
            continue
        candidates.append(os.path.expanduser(word))
    for candidate in candidates:
        path = os.path.join(cwd, candidate)  # an absolute candidate stays as it is
        try:
            if not stat.S_ISREG(os.stat(path).st_mode):
                continue
            real = os.path.realpath(path)
        except (OSError, ValueError):
            continue
        if (real == project or real.startswith(inside)) and real not in found:
            found.append(real)
            if len(found) >= MAX_FILES:
                break
    return [Path(p) for p in found]


# A file's digest, remembered while its stat says it is the same file unchanged: the key
# holds its inode and change time (ctime), which every write and every utime() moves on
# and no unprivileged program can set, so a rewrite that restores the old size and mtime
# is read again (a second write within the file system's timestamp tick is the limit).
_DIGESTS: dict[tuple[str, int, int, int, int, int], str] = {}
_DIGESTS_MAX = 4096


def _digest(path: Path, st: os.stat_result) -> str:
    if st.st_size > MAX_BYTES:
        return f"size+mtime:{st.st_mtime_ns}"
    key = (str(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    known = _DIGESTS.get(key)
    if known is not None:
        return known
    sha = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(_BLOCK):
            sha.update(block)
    digest = "sha256:" + sha.hexdigest()
    if len(_DIGESTS) >= _DIGESTS_MAX:
        _DIGESTS.clear()
    _DIGESTS[key] = digest
    return digest


def pinned_files(spec: ServerSpec) -> tuple[PinnedFile, ...]:
    """The project files ``spec``'s launch names, each with its content digest."""
    paths = named_paths(spec)
    if not paths:
        return ()
    project = _project(spec).resolve()
    pinned: list[PinnedFile] = []
    for path in paths:
        try:
            st = path.stat()
            digest = _digest(path, st)
        except OSError as exc:
            digest, size = f"unreadable:{exc.errno}", 0
        else:
            size = st.st_size
        pinned.append(PinnedFile(path.relative_to(project).as_posix(), size, digest))
    return tuple(pinned)
