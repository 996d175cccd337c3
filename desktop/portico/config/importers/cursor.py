"""Cursor: ``~/.cursor/mcp.json`` (global) and ``<project>/.cursor/mcp.json``.

Servers under ``mcpServers`` like Claude Desktop's, plus ``${env:NAME}``,
``${userHome}``, ``${workspaceFolder}``, ``${workspaceFolderBasename}`` and
``${pathSeparator}`` in values, ``envFile`` (not converted: Portico reads no env files) and a
static OAuth client under ``auth: {CLIENT_ID, CLIENT_SECRET, scopes}``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from portico.config.importers.common import (
    EntryConverter,
    ImportResult,
    convert_servers,
    editor_variables,
    servers_section,
    substitute,
    workspace_of,
)
from portico.config.importers.locations import Machine

KIND = "cursor"
LABEL = "Cursor"

ENV_FILE_WHY = (
    "Portico does not read env files; copy the variables you need into env "
    "(use ${keyring:NAME} for secrets)"
)


def default_locations(machine: Machine, project: Path | None = None) -> list[Path]:
    found = [project / ".cursor" / "mcp.json"] if project else []
    return [*found, machine.home / ".cursor" / "mcp.json"]


def convert(
    data: dict[str, Any],
    result: ImportResult,
    *,
    path: Path | None = None,
    project: Path | None = None,
    machine: Machine,
    **_: Any,
) -> None:
    servers = servers_section(data, "mcpServers", result)
    if servers is None:
        return
    replace = editor_variables(result, workspace_of(path, ".cursor", project), machine.home)

    def translate(text: str, server: str, where: str) -> str:
        return substitute(text, lambda inner: replace(inner, server, where))

    def extra(key: str, value: Any, fields: dict[str, Any], server: str) -> bool:
        if key != "auth":
            return False
        if not isinstance(value, dict):
            result.problem(server, "auth", "expected an object; not converted")
            return True
        oauth: dict[str, Any] = {}
        for k, v in value.items():
            if k in ("CLIENT_ID", "client_id") and isinstance(v, str):
                oauth["client_id"] = translate(v, server, f"auth.{k}")
                if "${" in oauth["client_id"]:
                    result.problem(
                        server,
                        f"auth.{k}",
                        "Portico expands ${...} references in client_secret but not in "
                        "client_id; kept as written, put the client id itself there",
                    )
            elif k in ("CLIENT_SECRET", "client_secret") and isinstance(v, str):
                oauth["client_secret"] = converter.text(v, server, f"auth.{k}", secret=True)
            elif k == "scopes" and isinstance(v, list) and all(isinstance(s, str) for s in v):
                oauth["scope"] = " ".join(v)
            else:
                result.problem(server, f"auth.{k}", "unknown OAuth setting; not converted")
        fields["oauth"] = oauth
        return True

    converter = EntryConverter(
        result, translate, extra, ignored={"envFile": ENV_FILE_WHY}, source_label=LABEL
    )
    convert_servers(servers, result, converter)
