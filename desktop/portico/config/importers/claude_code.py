"""Claude Code: ``~/.claude.json`` and a project's ``.mcp.json``.

``~/.claude.json`` holds user-level servers under the top-level ``mcpServers`` and
per-project ones under ``projects.<absolute path>.mcpServers`` (with
``disabledMcpServers`` listing the ones turned off there). A project's ``.mcp.json`` has
a top-level ``mcpServers`` only. Entries carry ``type`` (stdio, http, sse), ``command`` /
``args`` / ``env``, ``url`` / ``headers``, and optionally ``oauth`` (``clientId``,
``callbackPort``, ``scopes``) and ``headersHelper`` (not converted). ``${VAR}`` becomes
``${env:VAR}``; ``${VAR:-default}`` loses its default (reported).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Literal

from portico.config.importers.common import (
    EntryConverter,
    ImportResult,
    convert_servers,
    servers_section,
    substitute,
)
from portico.config.importers.locations import Machine

KIND = "claude-code"
LABEL = "Claude Code"
PROJECT_FILE = ".mcp.json"

Select = Literal["all", "user", "project"]

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

HEADERS_HELPER_WHY = (
    "runs a command to make the headers; Portico has no equivalent, so write the headers "
    "with ${keyring:NAME} or ${env:NAME} references instead"
)
AUTH_METADATA_WHY = (
    "Portico always discovers the authorization server from the MCP server; not converted"
)


def default_locations(machine: Machine, project: Path | None = None) -> list[Path]:
    config_dir = machine.environ.get("CLAUDE_CONFIG_DIR")
    if config_dir:
        return [Path(config_dir) / ".claude.json", machine.home / ".claude.json"]
    return [machine.home / ".claude.json"]


def project_file(project: Path) -> Path:
    return project / PROJECT_FILE


def _same_dir(a: str | Path, b: Path) -> bool:
    def norm(p: str | Path) -> str:
        return os.path.normcase(os.path.normpath(os.path.expanduser(str(p))))

    return norm(a) == norm(b) or norm(Path(a).resolve()) == norm(b.resolve())


def _converter(result: ImportResult) -> EntryConverter:
    def translate(text: str, server: str, where: str) -> str:
        def replace(inner: str) -> str | None:
            name, sep, default = inner.partition(":-")
            if not _ENV_NAME.match(name):
                return None
            if sep:
                result.problem(
                    server,
                    where,
                    f"${{{inner}}}: Portico references have no default value; written as "
                    f"${{env:{name}}} (set {name}, or put {default!r} in its place)",
                )
            return f"${{env:{name}}}"

        return substitute(text, replace)

    def extra(key: str, value: Any, fields: dict[str, Any], server: str) -> bool:
        if key != "oauth":
            return False
        if not isinstance(value, dict):
            result.problem(server, "oauth", "expected an object; not converted")
            return True
        oauth: dict[str, Any] = {}
        for k, v in value.items():
            if k == "clientId" and isinstance(v, str):
                oauth["client_id"] = v
            elif k == "clientSecret" and isinstance(v, str):
                oauth["client_secret"] = converter.text(v, server, f"oauth.{k}", secret=True)
            elif k == "callbackPort" and isinstance(v, int) and not isinstance(v, bool):
                oauth["redirect_port"] = v
            elif k == "scopes" and isinstance(v, str):
                oauth["scope"] = v
            elif k == "authServerMetadataUrl":
                result.problem(server, f"oauth.{k}", AUTH_METADATA_WHY)
            else:
                result.problem(server, f"oauth.{k}", "unknown OAuth setting; not converted")
        fields["oauth"] = oauth
        return True

    converter = EntryConverter(
        result,
        translate,
        extra,
        ignored={"headersHelper": HEADERS_HELPER_WHY},
        source_label=LABEL,
    )
    return converter


def convert(
    data: dict[str, Any],
    result: ImportResult,
    *,
    path: Path | None = None,
    project: Path | None = None,
    select: Select = "all",
    **_: Any,
) -> None:
    """Convert ``~/.claude.json`` (or a project's ``.mcp.json``: all of its servers).

    ``select``: "user" takes only the user-level servers, "project" only those of
    ``project``, "all" both (with ``project`` given, other projects are left out).
    Whatever is left out is listed in ``result.skipped`` with how to import it.
    """
    if path is not None and path.name == PROJECT_FILE:
        convert_project_file(data, result, path)
        return
    converter = _converter(result)
    servers = data.get("mcpServers")
    if servers is not None:
        if select == "project":
            count = len(servers) if isinstance(servers, dict) else 0
            if count:
                result.skipped.append(
                    f"{count} user-level server(s) ({', '.join(map(str, servers))}): "
                    "import them with --scope global"
                )
        else:
            convert_servers(servers, result, converter, "user")
    projects = data.get("projects")
    if projects is None:
        if servers is None:
            result.notes.append("the file has no mcpServers section: no servers to import")
        return
    if not isinstance(projects, dict):
        result.problems.append("projects: expected an object; per-project servers not imported")
        return
    for directory, settings in projects.items():
        if not isinstance(settings, dict):
            continue
        project_servers = settings.get("mcpServers")
        if not project_servers:
            continue
        wanted = select != "user" and (project is None or _same_dir(directory, project))
        if not wanted:
            names = (
                ", ".join(map(str, project_servers)) if isinstance(project_servers, dict) else "?"
            )
            flag = "--scope project --project" if select == "user" else "--project"
            result.skipped.append(
                f"server(s) {names} of project {directory}: import them with {flag} {directory}"
            )
            continue
        disabled = settings.get("disabledMcpServers") or []
        before = len(result.servers)
        convert_servers(project_servers, result, converter, f"project {directory}")
        for i in range(before, len(result.servers)):
            name, fields = result.servers[i]
            original = result.renamed.get(name, name)
            if original in disabled and fields.get("enabled", True):
                fields["enabled"] = False


def convert_project_file(data: dict[str, Any], result: ImportResult, path: Path) -> None:
    """A project's ``.mcp.json`` (read when importing for a project without --from)."""
    servers = servers_section(data, "mcpServers", result, where=str(path))
    if servers is not None:
        convert_servers(servers, result, _converter(result), f"project file {path}")
