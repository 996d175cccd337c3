"""Reading every config file of both scopes into one validated, merged :class:`Config`.

Order of precedence: a project server replaces a global server of the same name. The same
name in both files of one scope is an error naming both places, and neither starts (nor
the global one it would have replaced). Nothing here raises on bad input: unreadable
files, syntax errors and bad values all become diagnostics.

A project may tighten, never loosen (see :mod:`portico.config.project_rules`): a project
server that replaces a global one records what it replaces (``ServerSpec.replaces``, so
the trust review can say so and the sign-in is not shared unless the target is the same)
and keeps the stricter of the two budgets; a project setting that would loosen a global
security setting is ignored with a warning naming file:line and the key.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from portico import paths
from portico.config import limits, toml_dialect, yaml_dialect
from portico.config.model import Config, Diagnostic, Dialect, ModelsConfig, Scope, ServerSpec
from portico.config.models_config import merge_models, read_models
from portico.config.project_rules import (
    merge_settings,
    project_model,
    replacing,
    with_loosenings,
)
from portico.config.raw import RawFile
from portico.config.validate import settings_from, validate_servers, validate_settings


def dialect_of(path: Path) -> Dialect | None:
    """TOML for ``*.toml``, YAML for ``*.yaml`` / ``*.yml``, else None."""
    suffix = path.suffix.lower()
    if suffix == ".toml":
        return Dialect.TOML
    if suffix in (".yaml", ".yml"):
        return Dialect.YAML
    return None


def config_files(project: Path | None = None) -> list[tuple[Path, Scope]]:
    """Every config file Portico reads (existing or not), lowest precedence first."""
    p = paths.paths()
    files = [(p.global_toml, Scope.GLOBAL), (p.global_yaml, Scope.GLOBAL)]
    if project is not None:
        files += [
            (paths.project_toml(project), Scope.PROJECT),
            (paths.project_yaml(project), Scope.PROJECT),
        ]
    return files


def load(project: Path | None = None) -> Config:
    """The effective config: the global files plus, with ``project``, its project files."""
    existing = [(f, s) for f, s in config_files(project) if f.exists()]
    return load_files(existing, project=project)


def read_file(path: Path, scope: Scope, dialect: Dialect | None = None) -> RawFile:
    """One file, read and parsed (not validated). I/O problems become diagnostics."""
    dialect = dialect or dialect_of(path) or Dialect.TOML
    try:
        too_big = limits.size_problem(path.stat().st_size)
        data = b"" if too_big else path.read_bytes()
    except OSError as exc:
        raw = RawFile(path=path, scope=scope, dialect=dialect, parsed=False)
        raw.error(f"cannot be read: {exc.strerror or exc}")
        return raw
    if too_big:
        raw = RawFile(path=path, scope=scope, dialect=dialect, parsed=False)
        raw.error(too_big.message)
        return raw
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raw = RawFile(path=path, scope=scope, dialect=dialect, parsed=False)
        line = data[: exc.start].count(b"\n") + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raw.error("is not UTF-8 text: save it as UTF-8", line=line, column=column)
        return raw
    if text.startswith("\ufeff"):
        text = text[1:]
    return parse_raw(text, path, scope, dialect)


def parse_raw(text: str, path: Path, scope: Scope, dialect: Dialect) -> RawFile:
    over = limits.size_problem(len(text)) or (
        limits.yaml_problem(text) if dialect is Dialect.YAML else None
    )
    if over is not None:
        raw = RawFile(path=path, scope=scope, dialect=dialect, parsed=False)
        raw.error(over.message, line=over.line)
        return raw
    try:
        if dialect is Dialect.TOML:
            return toml_dialect.parse(text, path, scope)
        return yaml_dialect.parse(text, path, scope)
    except Exception as exc:  # e.g. RecursionError on absurd nesting: report, never raise
        raw = RawFile(path=path, scope=scope, dialect=dialect, parsed=False)
        raw.error(f"could not be read ({type(exc).__name__}: {exc}); simplify the file")
        return raw


@dataclass
class _FileResult:
    raw: RawFile
    servers: list[ServerSpec]
    settings: dict[str, tuple[Any, int]]
    models: ModelsConfig


def _evaluate(raw: RawFile) -> _FileResult:
    return _FileResult(
        raw, validate_servers(raw), validate_settings(raw), read_models(raw, raw.models)
    )


def load_files(files: Sequence[tuple[Path, Scope]], *, project: Path | None = None) -> Config:
    """Read, validate and merge ``files`` (global before project; file order otherwise)."""
    results = [_evaluate(read_file(path, scope)) for path, scope in files]
    return _merge(results, project=project)


def parse_text(
    text: str, path: Path, scope: Scope = Scope.GLOBAL, dialect: Dialect | None = None
) -> Config:
    """Validate ``text`` as if it were the file ``path`` (the editor's "check this text")."""
    dialect = dialect or dialect_of(path) or Dialect.TOML
    return _merge([_evaluate(parse_raw(text, path, scope, dialect))], project=None)


def _merge(results: list[_FileResult], *, project: Path | None) -> Config:
    models, _ = merge_models([(r.raw, r.models) for r in results if r.raw.scope is Scope.GLOBAL])
    diagnostics: list[Diagnostic] = []
    for result in results:
        diagnostics.extend(result.raw.diagnostics)

    by_scope: dict[Scope, dict[str, ServerSpec]] = {Scope.GLOBAL: {}, Scope.PROJECT: {}}
    for scope in (Scope.GLOBAL, Scope.PROJECT):
        claims: dict[str, list[tuple[RawFile, int]]] = {}
        for result in results:
            raw = result.raw
            if raw.scope is not scope or raw.blocked or not raw.parsed:
                continue
            for server in raw.servers:
                places = claims.setdefault(server.name, [])
                if not any(p[0] is raw for p in places):
                    places.append((raw, server.line))
        valid = {
            spec.name: spec
            for result in results
            if result.raw.scope is scope
            for spec in result.servers
        }
        for name, places in claims.items():
            if len(places) > 1:
                both = " and ".join(f"{raw.path}:{line}" for raw, line in places)
                for raw, line in places:
                    diagnostics.append(
                        Diagnostic(
                            "error",
                            f"is defined in both {both} ({scope.value} scope); neither "
                            "starts: remove or rename one of them",
                            raw.path,
                            line,
                            name,
                        )
                    )
                by_scope[scope][name] = None  # type: ignore[assignment]  # claimed, not started
            else:
                by_scope[scope][name] = valid.get(name)  # type: ignore[assignment]

    servers: list[ServerSpec] = []
    project_claims = by_scope[Scope.PROJECT]
    global_specs = by_scope[Scope.GLOBAL]
    for name, spec in global_specs.items():
        if name in project_claims:
            if spec is not None and project_claims[name] is None:
                diagnostics.append(
                    Diagnostic(
                        "warning",
                        "is not started: the project defines a server of the same name "
                        "(which replaces this one) and that entry has errors",
                        spec.source.path,
                        spec.source.line,
                        name,
                    )
                )
            continue
        if spec is not None:
            servers.append(spec)
    for name, spec in project_claims.items():
        if spec is None:
            continue
        replaced = global_specs.get(name)
        if replaced is not None:
            spec, notes = replacing(spec, replaced)
            diagnostics.extend(notes)
        servers.append(with_loosenings(spec, replaced))

    per_scope: dict[Scope, dict[str, tuple[Any, Path, int]]] = {}
    for scope in (Scope.GLOBAL, Scope.PROJECT):
        seen: dict[str, tuple[Any, Path, int]] = {}
        for result in results:
            if result.raw.scope is not scope:
                continue
            for field, (value, line) in result.settings.items():
                if field in seen:
                    first_value, first_path, first_line = seen[field]
                    if first_value != value:
                        diagnostics.append(
                            Diagnostic(
                                "warning",
                                f"is also set to {first_value} in {first_path}:{first_line}; "
                                f"that value is used: set it in one file only",
                                result.raw.path,
                                line,
                                None,
                                field,
                            )
                        )
                    continue
                seen[field] = (value, result.raw.path, line)
        per_scope[scope] = seen
    settings_values, notes = merge_settings(per_scope[Scope.GLOBAL], per_scope[Scope.PROJECT])
    notes += project_model(
        settings_values,
        per_scope[Scope.GLOBAL],
        per_scope[Scope.PROJECT],
        lambda name: bool((spec := models.provider(name)) and spec.projects),
    )
    diagnostics.extend(notes)
    settings = settings_from(settings_values)

    return Config(
        servers=tuple(
            _sandbox_default(_default_roots(spec, settings.default_roots), settings.sandbox_all)
            for spec in servers
        ),
        settings=settings,
        diagnostics=tuple(diagnostics),
        files=tuple(r.raw.path for r in results),
        project=project,
        unparsed=tuple(r.raw.path for r in results if not r.raw.parsed),
        models=models,
    )


def _default_roots(spec: ServerSpec, default: tuple[str, ...]) -> ServerSpec:
    """A global server that sets no ``roots`` is offered the top-level ``roots``."""
    if spec.roots is not None or spec.source.scope is not Scope.GLOBAL:
        return spec
    return replace(spec, roots=default)


def _sandbox_default(spec: ServerSpec, on: bool) -> ServerSpec:
    """A global server follows the top-level ``sandbox.enabled`` unless it says."""
    if not on or spec.source.scope is not Scope.GLOBAL:
        return spec
    return replace(spec, sandbox_by_default=True)


def keep_previous(new: Config, previous: Config | None) -> Config:
    """``new``, but servers of files that no longer parse keep their previous settings.

    A watcher calls this after a reload: a half-typed edit must not stop servers that
    were running from the last good version of that file.
    """
    if previous is None or not new.unparsed:
        return new
    names = {spec.name for spec in new.servers}
    kept = [
        spec
        for spec in previous.servers
        if spec.source.path in new.unparsed and spec.name not in names
    ]
    if not kept:
        return new
    return replace(new, servers=new.servers + tuple(kept))
