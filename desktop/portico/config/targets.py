"""Which file an edit goes to.

``choose_file``: a new server goes to the scope's ``mcp.toml``, unless that scope already
defines its servers only in ``config.yaml`` (then it joins them there).
``defining_file``: the file that defines a server (project scope first, as it wins), so
``enable``/``disable``/``remove``/``rename`` write back where the person wrote it.
"""

from __future__ import annotations

from pathlib import Path

from portico import paths
from portico.config.document import ConfigDocument, EditError
from portico.config.model import Scope


def scope_files(scope: Scope, project: Path | None) -> tuple[Path, Path]:
    """(mcp.toml, config.yaml) of ``scope``."""
    if scope is Scope.PROJECT:
        if project is None:
            raise ValueError("the project scope needs a project folder (--project DIR)")
        return paths.project_toml(project), paths.project_yaml(project)
    p = paths.paths()
    return p.global_toml, p.global_yaml


def _server_names(path: Path) -> list[str] | None:
    """Names defined in ``path``; None if there is no such file or it does not parse.

    A line scan answers where it is certain (no parse); otherwise the file is parsed."""
    from portico.config.document import dialect_of
    from portico.config.name_scan import scan_names

    try:
        scanned = scan_names(path.read_text(encoding="utf-8"), dialect_of(path))
    except (OSError, UnicodeDecodeError):
        scanned = None
    if scanned is not None:
        return scanned
    try:
        return ConfigDocument.load(path).server_names()
    except (FileNotFoundError, EditError, IsADirectoryError):
        return None


def choose_file(scope: Scope, project: Path | None) -> Path:
    toml, yaml = scope_files(scope, project)
    if _server_names(toml):
        return toml
    if _server_names(yaml):
        return yaml
    return toml


def defining_files(name: str, project: Path | None) -> list[Path]:
    """Every file that defines ``name``, highest precedence first (project, then global)."""
    scopes = [Scope.PROJECT, Scope.GLOBAL] if project is not None else [Scope.GLOBAL]
    found: list[Path] = []
    for scope in scopes:
        for path in scope_files(scope, project):
            names = _server_names(path)
            if names and name in names:
                found.append(path)
    return found


def defining_file(name: str, project: Path | None) -> Path | None:
    """The file whose definition of ``name`` is in effect (None if no file defines it).

    What the loader would say, without loading and merging every file: the first file
    that defines ``name`` (project scope first, as it wins) and that the loader reads (it
    parses and is not of a newer format version). A server that fails validation is
    still found, so it can be fixed, disabled or removed. Names come from line scans; only
    that file is opened (for a big file, one fast parse).
    """
    found = defining_files(name, project)
    for path in found:
        try:
            ConfigDocument.load(path)
        except (EditError, OSError):  # the loader skips a file it cannot read
            continue
        return path
    return found[0] if found else None
