"""Where a server's ``sandbox.read`` / ``sandbox.write`` entries point.

``~`` is the person's home; a relative entry is taken from the project folder (project
servers) or the config file's folder (global ones), as ``cwd`` is.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from portico.config.model import Scope, ServerSpec

PROJECT_DIR = ".portico"


def base_folder(spec: ServerSpec) -> Path:
    """The folder relative entries start from: the project, or the config file's."""
    folder = spec.source.path.parent
    if spec.source.scope is Scope.PROJECT and folder.name == PROJECT_DIR:
        folder = folder.parent
    return folder


def resolved(spec: ServerSpec, entries: Iterable[str]) -> tuple[str, ...]:
    """Each entry as an absolute, normalised path (symlinks are not followed here)."""
    base = base_folder(spec)
    out: list[str] = []
    for entry in entries:
        given = Path(os.path.expanduser(entry))
        path = given if given.is_absolute() else base / given
        out.append(os.path.normpath(path))
    return tuple(out)


def inside(path: str, folder: str) -> bool:
    """``path`` is ``folder`` or below it."""
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def leads_out(path: str, folder: str) -> str | None:
    """Where ``path`` really is, when it lies in ``folder`` as written but a link takes
    it out of ``folder`` (a project's link into the person's home); else None."""
    written, real_folder = os.path.normpath(path), os.path.realpath(folder)
    if not (inside(written, os.path.normpath(folder)) or inside(written, real_folder)):
        return None
    real = os.path.realpath(written)
    return None if inside(real, real_folder) else real
