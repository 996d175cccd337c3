"""Built-in presets: exact neutral fields, directories for filesystem, and they load."""

from __future__ import annotations

from pathlib import Path

import pytest
from ruamel.yaml import YAML

from portico.config import Scope, load_files
from portico.config.model import Transport
from portico.config.presets import (
    PRESET_INFO,
    PRESETS,
    UnknownPresetError,
    preset_fields,
)

EXPECTED = {
    "codex": {"command": "codex", "args": ["mcp-server"]},
    "everything": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"]},
    "filesystem": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem"]},
    "memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]},
    "github": {
        "command": "npx",
        "args": ["-y", "@modelcontextprotocol/server-github"],
        "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "${keyring:GITHUB_PERSONAL_ACCESS_TOKEN}"},
    },
    "fetch": {"command": "uvx", "args": ["mcp-server-fetch"]},
}


def test_the_preset_list() -> None:
    assert list(PRESETS) == list(EXPECTED)


@pytest.mark.parametrize("name", list(EXPECTED))
def test_preset_fields_exactly(name: str, tmp_path: Path) -> None:
    fields = preset_fields(name, project=tmp_path)
    expected = {k: (list(v) if isinstance(v, list) else v) for k, v in EXPECTED[name].items()}
    if name == "filesystem":
        expected["args"] = [*expected["args"], str(tmp_path.resolve())]
    assert fields == expected
    info = PRESET_INFO[name]
    assert info.description and "\n" not in info.description and len(info.description) < 80
    assert info.requires


def test_filesystem_takes_the_directories_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    fields = preset_fields("filesystem", directories=["notes", tmp_path / "photos"])
    assert fields["args"][2:] == [str(tmp_path / "notes"), str(tmp_path / "photos")]
    # No directory and no project: the current directory.
    assert preset_fields("filesystem")["args"][2:] == [str(tmp_path.resolve())]


def test_presets_are_read_only_and_copies_are_fresh() -> None:
    with pytest.raises(TypeError):
        PRESETS["codex"]["command"] = "other"  # type: ignore[index]
    first = preset_fields("codex")
    first["args"].append("--extra")
    assert preset_fields("codex") == {"command": "codex", "args": ["mcp-server"]}


def test_unknown_preset_lists_the_known_ones() -> None:
    with pytest.raises(UnknownPresetError) as info:
        preset_fields("gitlab")
    assert str(info.value) == (
        "unknown preset 'gitlab'; the presets are: codex, everything, filesystem, memory, "
        "github, fetch"
    )


def test_every_preset_loads_without_a_diagnostic(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    servers = {name: preset_fields(name, project=tmp_path) for name in PRESETS}
    with path.open("w") as out:
        YAML().dump({"mcp_servers": servers}, out)
    config = load_files([(path, Scope.GLOBAL)])
    assert config.diagnostics == ()
    for name, fields in servers.items():
        spec = config.server(name)
        assert spec is not None
        assert spec.transport is Transport.STDIO
        assert (spec.command, list(spec.args)) == (fields["command"], fields["args"])
        assert spec.env_dict == fields.get("env", {})
