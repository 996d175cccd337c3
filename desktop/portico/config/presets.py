"""Built-in presets for well-known MCP servers (``portico mcp add NAME --preset P``).

A preset fills in the transport details only (command and args, or a URL); anything
given on the same command line wins. Fields are NEUTRAL: YAML spelling and units, the
shape ``ConfigDocument.add_server`` takes.

The ``filesystem`` server needs the directories it may touch as arguments. ``PRESETS``
holds it without any; ``preset_fields("filesystem", directories=[...], project=DIR)``
appends the directories given (made absolute), or the project folder when none is given
(``portico mcp add files --preset filesystem --directory ~/notes``).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any


@dataclass(frozen=True)
class Preset:
    name: str
    description: str  # one line, shown in the GUI's "Add server" list and in `--help`
    fields: Mapping[str, Any]
    requires: str  # what must be installed on the machine
    takes_directories: bool = False
    secrets: tuple[str, ...] = ()  # keyring names the server's env refers to


def _npx(package: str) -> dict[str, Any]:
    return {"command": "npx", "args": ["-y", package]}


GITHUB_TOKEN_SECRET = "GITHUB_PERSONAL_ACCESS_TOKEN"

_PRESETS: tuple[Preset, ...] = (
    Preset(
        name="codex",
        description="The Codex CLI as an MCP server (codex mcp-server over stdio).",
        fields={"command": "codex", "args": ["mcp-server"]},
        requires="the codex CLI on PATH",
    ),
    Preset(
        name="everything",
        description="The MCP reference test server: tools, prompts, resources, sampling.",
        fields=_npx("@modelcontextprotocol/server-everything"),
        requires="Node.js (npx)",
    ),
    Preset(
        name="filesystem",
        description="Read, write and search files in the directories you allow.",
        fields=_npx("@modelcontextprotocol/server-filesystem"),
        requires="Node.js (npx)",
        takes_directories=True,
    ),
    Preset(
        name="memory",
        description="A persistent knowledge graph the model can store facts in.",
        fields=_npx("@modelcontextprotocol/server-memory"),
        requires="Node.js (npx)",
    ),
    Preset(
        name="github",
        description="GitHub repositories, issues and pull requests through the GitHub API.",
        fields={
            **_npx("@modelcontextprotocol/server-github"),
            "env": {GITHUB_TOKEN_SECRET: f"${{keyring:{GITHUB_TOKEN_SECRET}}}"},
        },
        requires="Node.js (npx) and a GitHub personal access token",
        secrets=(GITHUB_TOKEN_SECRET,),
    ),
    Preset(
        name="fetch",
        description="Fetch web pages and turn them into markdown for the model.",
        fields={"command": "uvx", "args": ["mcp-server-fetch"]},
        requires="uv (uvx)",
    ),
)


def _freeze(value: Any) -> Any:
    if isinstance(value, Mapping):
        return MappingProxyType({k: _freeze(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return tuple(_freeze(v) for v in value)
    return value


PRESET_INFO: Mapping[str, Preset] = MappingProxyType({p.name: p for p in _PRESETS})
PRESETS: Mapping[str, Mapping[str, Any]] = MappingProxyType(
    {p.name: _freeze(p.fields) for p in _PRESETS}
)


class UnknownPresetError(KeyError):
    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(name)

    def __str__(self) -> str:
        return f"unknown preset {self.name!r}; the presets are: {', '.join(PRESETS)}"


def _thaw(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _thaw(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [_thaw(v) for v in value]
    return copy.copy(value)


def preset_fields(
    name: str,
    *,
    directories: Sequence[str | Path] = (),
    project: Path | None = None,
) -> dict[str, Any]:
    """A fresh, mutable copy of the preset's neutral fields.

    For a preset that takes directories, ``directories`` (made absolute) are appended to
    its args; without any, the ``project`` folder (else the current directory) is used.
    Raises ``UnknownPresetError`` for a name that is not a preset.
    """
    try:
        preset = PRESET_INFO[name]
    except KeyError:
        raise UnknownPresetError(name) from None
    fields: dict[str, Any] = _thaw(PRESETS[name])
    if preset.takes_directories:
        chosen = [Path(d).expanduser() for d in directories] or [project or Path.cwd()]
        fields["args"].extend(str(d.resolve()) for d in chosen)
    return fields
