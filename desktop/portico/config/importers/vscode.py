"""VS Code: ``mcp.json`` in the user profile or ``<workspace>/.vscode/mcp.json``.

Servers under ``servers`` (or ``mcp.servers`` in a ``settings.json``) with ``type``
stdio / http / sse. ``inputs`` are values VS Code asks for once and stores
(``promptString`` with ``id``, ``description``, ``password``); each ``${input:ID}``
becomes a ``${keyring:ID}`` reference and the result lists the keyring entries the person
must fill with ``portico secret set ID``. ``${env:NAME}`` stays as it is; ``envFile`` and
``dev`` are reported as not converted.
"""

from __future__ import annotations

import re
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
from portico.config.importers.cursor import ENV_FILE_WHY
from portico.config.importers.locations import Machine

KIND = "vscode"
LABEL = "VS Code"

IGNORED = {
    "envFile": ENV_FILE_WHY,
    "dev": "VS Code's watch-and-debug settings for server development; not converted",
    "gallery": "VS Code gallery metadata; not needed by Portico",
    "version": "VS Code gallery metadata; not needed by Portico",
}


def default_locations(machine: Machine, project: Path | None = None) -> list[Path]:
    found = [project / ".vscode" / "mcp.json"] if project else []
    return [*found, machine.app_config_dir() / "Code" / "User" / "mcp.json"]


def keyring_name(input_id: str) -> str:
    """A keyring entry name for a VS Code input id (the id itself when it is tidy)."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", input_id).strip("-") or "input"


def _inputs(data: dict[str, Any], result: ImportResult) -> dict[str, dict[str, Any]]:
    inputs = data.get("inputs", [])
    if not isinstance(inputs, list):
        result.problems.append(
            "inputs: expected a list; ${input:...} references kept as keyring names"
        )
        return {}
    found: dict[str, dict[str, Any]] = {}
    for i, item in enumerate(inputs):
        if not isinstance(item, dict) or not isinstance(item.get("id"), str):
            result.problems.append(f"inputs[{i}]: an input without an id; ignored")
            continue
        found[item["id"]] = item
    return found


def convert(
    data: dict[str, Any],
    result: ImportResult,
    *,
    path: Path | None = None,
    project: Path | None = None,
    machine: Machine,
    **_: Any,
) -> None:
    if data.get("servers") is None and isinstance(data.get("mcp"), dict):  # settings.json
        data = data["mcp"]
    servers = servers_section(data, "servers", result)
    if servers is None:
        return
    inputs = _inputs(data, result)
    editor = editor_variables(result, workspace_of(path, ".vscode", project), machine.home)

    def translate(text: str, server: str, where: str) -> str:
        def replace(inner: str) -> str | None:
            if not inner.startswith("input:"):
                return editor(inner, server, where)
            input_id = inner.removeprefix("input:")
            name = keyring_name(input_id)
            spec = inputs.get(input_id)
            if spec is None:
                result.problem(
                    server,
                    where,
                    f"${{input:{input_id}}} is not defined in inputs; written as "
                    f"${{keyring:{name}}}",
                )
                description = ""
            else:
                description = str(spec.get("description", ""))
                kind = spec.get("type", "promptString")
                if kind != "promptString":
                    result.problem(
                        server,
                        where,
                        f"input {input_id!r} is a {kind}; written as ${{keyring:{name}}}: "
                        f"store the value you would pick with `portico secret set {name}`",
                    )
            result.need_secret(name, description, server)
            return f"${{keyring:{name}}}"

        return substitute(text, replace)

    converter = EntryConverter(result, translate, ignored=IGNORED, source_label=LABEL)
    convert_servers(servers, result, converter, key="servers")
