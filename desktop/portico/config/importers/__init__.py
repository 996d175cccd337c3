"""Import MCP servers from other clients' config files.

``import_servers(kind, path)`` reads one client's file (its default location when
``path`` is None) and returns the servers as NEUTRAL fields (YAML spelling, the shape
``ConfigDocument.add_server`` takes) plus a report of everything it could not convert.
It never writes anything: ``portico mcp import`` does that.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

from portico.config.importers import claude_code, claude_desktop, cursor, vscode
from portico.config.importers.claude_code import Select
from portico.config.importers.common import (
    ImportResult,
    SecretToSet,
    is_valid_name,
    to_valid_name,
)
from portico.config.importers.jsonc import ImportSourceError, read_json
from portico.config.importers.locations import Machine

SOURCES: Mapping[str, ModuleType] = {
    m.KIND: m for m in (claude_desktop, claude_code, vscode, cursor)
}
KINDS: tuple[str, ...] = tuple(SOURCES)

__all__ = [
    "KINDS",
    "ImportResult",
    "ImportSourceError",
    "Machine",
    "SecretToSet",
    "default_locations",
    "default_path",
    "import_servers",
    "is_valid_name",
    "label",
    "to_valid_name",
]


def _source(kind: str) -> ModuleType:
    try:
        return SOURCES[kind]
    except KeyError:
        raise ValueError(
            f"unknown import source {kind!r}; choose one of: {', '.join(KINDS)}"
        ) from None


def label(kind: str) -> str:
    """The client's display name ("Claude Desktop")."""
    return str(_source(kind).LABEL)


def default_locations(
    kind: str, *, project: Path | None = None, machine: Machine | None = None
) -> list[Path]:
    """Where ``kind`` keeps its config on this platform, most specific first (a
    project's own file before the user-level one when ``project`` is given)."""
    return list(_source(kind).default_locations(machine or Machine.current(), project))


def default_path(
    kind: str, *, project: Path | None = None, machine: Machine | None = None
) -> Path | None:
    """The first default location that exists, or None."""
    for candidate in default_locations(kind, project=project, machine=machine):
        if candidate.is_file():
            return candidate
    return None


def import_servers(
    kind: str,
    path: Path | None = None,
    *,
    project: Path | None = None,
    select: Select = "all",
    machine: Machine | None = None,
) -> ImportResult:
    """Read ``kind``'s config (``path``, else its default location) and convert it.

    ``project``: the folder being imported for: picks ``<project>/.vscode/mcp.json`` or
    ``.cursor/mcp.json`` when no path is given, fills in ``${workspaceFolder}``, and for
    Claude Code selects that project's entries (``select``: "all", "user" for the
    user-level servers only, "project" for the project's only; a project's ``.mcp.json``
    is read too when ``path`` is None).
    Raises ``ImportSourceError`` (file, line, column) when the file is missing or is not
    valid JSON; every problem with a single server is reported in the result instead.
    """
    source = _source(kind)
    machine = machine or Machine.current()
    result = ImportResult(kind=kind)
    if path is None:
        path = default_path(kind, project=project, machine=machine)
        if path is None and not (kind == claude_code.KIND and _has_mcp_json(project, select)):
            tried = ", ".join(
                str(p) for p in default_locations(kind, project=project, machine=machine)
            )
            raise ImportSourceError(
                f"no {source.LABEL} config found (looked at {tried}); "
                "pass the file with --from PATH"
            )
        use_mcp_json = kind == claude_code.KIND and _has_mcp_json(project, select)
    else:
        use_mcp_json = False
    if path is not None:
        result.source = path
        data = _top_object(read_json(path), path)
        source.convert(data, result, path=path, project=project, select=select, machine=machine)
    if use_mcp_json and project is not None:
        mcp_json = claude_code.project_file(project)
        if result.source is None:
            result.source = mcp_json
        claude_code.convert_project_file(
            _top_object(read_json(mcp_json), mcp_json), result, mcp_json
        )
    return result


def _has_mcp_json(project: Path | None, select: Select) -> bool:
    return project is not None and select != "user" and claude_code.project_file(project).is_file()


def _top_object(data: Any, path: Path) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise ImportSourceError("expected a JSON object at the top of the file", path, 1, 1)
    return data
