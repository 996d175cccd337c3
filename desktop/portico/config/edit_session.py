"""The config files one edit command works on, each read once and parsed at most once.

Finding the file that defines a server needs the names of every config file; only the
file that is edited needs its round-trip tree. So names come from a line scan
(``portico.config.name_scan``) where that is certain, and a file is parsed (once, then
kept) when it is edited or when the scan cannot tell. A result is validated from the
edited tree, for the servers the edit touched, before anything is written.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from portico import paths
from portico.config.atomic import ReadOnlyError, read_bytes
from portico.config.document import ConfigDocument, EditError, dialect_of
from portico.config.model import Diagnostic, Scope
from portico.config.name_scan import scan_names


class ConfigFiles:
    """The files of both scopes (highest precedence first), read lazily and only once."""

    def __init__(self, project: Path | None) -> None:
        self.project = project
        self._docs: dict[Path, ConfigDocument] = {}
        self._names: dict[Path, list[str]] = {}

    def scope_files(self, scope: Scope) -> tuple[Path, Path]:
        """(mcp.toml, config.yaml) of ``scope``."""
        if scope is Scope.PROJECT:
            if self.project is None:
                raise EditError("the project scope needs a project folder (--project DIR)")
            return paths.project_toml(self.project), paths.project_yaml(self.project)
        p = paths.paths()
        return p.global_toml, p.global_yaml

    def files(self) -> list[tuple[Path, Scope]]:
        scopes = [Scope.PROJECT, Scope.GLOBAL] if self.project is not None else [Scope.GLOBAL]
        return [(path, scope) for scope in scopes for path in self.scope_files(scope)]

    def scope_of(self, path: Path) -> Scope:
        resolved = path.resolve()
        for candidate, scope in self.files():
            if candidate.resolve() == resolved:
                return scope
        return Scope.PROJECT if path.parent.name == paths.PROJECT_DIR_NAME else Scope.GLOBAL

    def document(self, path: Path) -> ConfigDocument:
        """The round-trip document of ``path`` (a new one if there is no file), parsed once."""
        path = Path(path)
        if path not in self._docs:
            self._docs[path] = ConfigDocument.open(path)
            self._names[path] = self._docs[path].server_names()
        return self._docs[path]

    def loaded(self) -> list[Path]:
        """The files parsed so far."""
        return list(self._docs)

    def forget(self, path: Path) -> None:
        """Read ``path`` again next time (after a conflict)."""
        self._docs.pop(Path(path), None)
        self._names.pop(Path(path), None)

    def names(self, path: Path) -> list[str]:
        """The servers ``path`` defines ([] if there is no such file)."""
        path = Path(path)
        if path in self._names:
            return self._names[path]
        data, _snap = read_bytes(path) if path.is_file() else (None, None)
        if data is None:
            self._names[path] = []
            return []
        try:
            scanned = scan_names(data.decode("utf-8"), dialect_of(path))
        except UnicodeDecodeError:
            scanned = None
        if scanned is None:
            return self.document(path).server_names()
        self._names[path] = scanned
        return scanned

    def defining_files(self, name: str) -> list[Path]:
        """Every file that defines ``name``, highest precedence first."""
        return [path for path, _scope in self.files() if name in self.names(path)]

    def confirm_parsed(self) -> None:
        """Parse every existing file whose names came from a scan, so a file that does not
        parse says so (DocumentParseError) instead of looking empty."""
        for path, _scope in self.files():
            if path.is_file() and path not in self._docs:
                self.document(path)


def refuse_read_only(path: Path) -> None:
    """ReadOnlyError when ``path`` exists and this user may not write it."""
    target = Path(os.path.realpath(path))
    if target.exists() and not os.access(target, os.W_OK):
        raise ReadOnlyError(path)


def new_problems(
    doc: ConfigDocument,
    scope: Scope,
    names: Sequence[str],
    before: Sequence[Diagnostic] = (),
) -> list[Diagnostic]:
    """Errors the edited ``doc`` gives ``names`` that ``before`` did not have (by key and
    message), each with its line. Validated from the tree: nothing is parsed again."""
    known = {(d.server, d.key, d.message) for d in before if d.is_error}
    quick = [d for d in doc.problems(names, scope, lines=False) if d.is_error]
    if not [d for d in quick if (d.server, d.key, d.message) not in known]:
        return []
    return [
        d
        for d in doc.problems(names, scope, lines=True)
        if d.is_error and (d.server, d.key, d.message) not in known
    ]


def field_problems(
    name: str, fields: Mapping[str, Any], path: Path, scope: Scope
) -> list[Diagnostic]:
    """What the loader would say about a server of NEUTRAL ``fields`` written to ``path``."""
    from portico.config.raw import RawFile, RawServer
    from portico.config.translate import to_dialect
    from portico.config.validate import validate_servers

    dialect = dialect_of(path)
    raw = RawFile(path=path, scope=scope, dialect=dialect)
    raw.servers.append(RawServer(name, to_dialect(fields, dialect), 1))
    validate_servers(raw)
    return list(raw.diagnostics)


def refusal(doc: ConfigDocument, problems: Sequence[Diagnostic], what: str) -> EditError:
    lines = "\n".join(f"  {d}" for d in problems)
    return EditError(f"not written: {what}:\n{lines}\n{doc.path} is unchanged")
