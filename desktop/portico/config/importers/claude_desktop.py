"""Claude Desktop: ``claude_desktop_config.json``, servers under ``mcpServers``.

Entries are ``{command, args, env}`` for local servers and ``{url, headers}`` or
``{type: "sse" | "http", url, headers}`` for remote ones. The app expands no variables,
so values are copied as written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from portico.config.importers.common import EntryConverter, ImportResult
from portico.config.importers.locations import Machine

KIND = "claude-desktop"
LABEL = "Claude Desktop"
FILE_NAME = "claude_desktop_config.json"


def default_locations(machine: Machine, project: Path | None = None) -> list[Path]:
    return [machine.app_config_dir() / "Claude" / FILE_NAME]


def convert_servers(
    servers: Any, result: ImportResult, converter: EntryConverter, origin: str | None = None
) -> None:
    """Convert an ``mcpServers`` object (shared by the mcpServers-style importers)."""
    if not isinstance(servers, dict):
        result.problems.append(
            f"mcpServers: expected an object of servers, found {type(servers).__name__}; "
            "nothing imported"
        )
        return
    for name, entry in servers.items():
        fields = converter.convert(str(name), entry)
        if fields is not None:
            result.add(str(name), fields, origin)


def convert(data: dict[str, Any], result: ImportResult, **_: Any) -> None:
    if "mcpServers" not in data:
        result.notes.append("the file has no mcpServers section: no servers to import")
        return
    convert_servers(data["mcpServers"], result, EntryConverter(result, source_label=LABEL))
