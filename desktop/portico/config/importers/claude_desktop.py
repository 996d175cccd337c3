"""Claude Desktop: ``claude_desktop_config.json``, servers under ``mcpServers``.

Entries are ``{command, args, env}`` for local servers and ``{url, headers}`` or
``{type: "sse" | "http", url, headers}`` for remote ones. The app expands no variables,
so values are copied as written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from portico.config.importers.common import (
    EntryConverter,
    ImportResult,
    convert_servers,
    servers_section,
)
from portico.config.importers.locations import Machine

KIND = "claude-desktop"
LABEL = "Claude Desktop"
FILE_NAME = "claude_desktop_config.json"


def default_locations(machine: Machine, project: Path | None = None) -> list[Path]:
    return [machine.app_config_dir() / "Claude" / FILE_NAME]


def convert(data: dict[str, Any], result: ImportResult, **_: Any) -> None:
    servers = servers_section(data, "mcpServers", result)
    if servers is not None:
        convert_servers(servers, result, EntryConverter(result, source_label=LABEL))
