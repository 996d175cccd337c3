"""What every importer shares: JSON with comments, clear parse errors, server names."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from portico.config.importers import (
    KINDS,
    ImportSourceError,
    Machine,
    import_servers,
    is_valid_name,
    to_valid_name,
)
from portico.config.importers.jsonc import strip_jsonc

MACHINE = Machine("linux", Path("/home/ada"), {})


@pytest.mark.parametrize("kind", KINDS)
def test_invalid_json_names_file_line_and_column(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{\n  "mcpServers": {\n    "a": {"command": "x",}\n    "b": 1\n  }\n}\n')
    with pytest.raises(ImportSourceError) as info:
        import_servers(kind, path, machine=MACHINE)
    error = info.value
    assert (error.path, error.line, error.column) == (path, 4, 5)
    assert str(error) == (
        f"{path}:4:5: not valid JSON: Expecting ',' delimiter; fix the file and import again"
    )


SECTION = {"vscode": "servers"}  # the others keep their servers under mcpServers


@pytest.mark.parametrize("kind", KINDS)
def test_a_missing_or_wrong_servers_section_says_so_the_same_way(tmp_path: Path, kind: str) -> None:
    key = SECTION.get(kind, "mcpServers")
    path = tmp_path / "config.json"
    path.write_text('{"other": 1}')
    result = import_servers(kind, path, machine=MACHINE)
    assert result.servers == [] and result.problems == []
    assert f"has no {key} section: no servers to import" in " ".join(result.notes)
    path.write_text(json.dumps({key: ["not", "an", "object"]}))
    result = import_servers(kind, path, machine=MACHINE)
    assert result.servers == []
    assert result.problems == [
        f"{key}: expected an object of servers, found list; nothing imported"
    ]


def test_missing_file_and_non_object(tmp_path: Path) -> None:
    with pytest.raises(ImportSourceError, match="file not found; pass the right one with --from"):
        import_servers("cursor", tmp_path / "nope.json", machine=MACHINE)
    (tmp_path / "list.json").write_text("[1, 2]")
    with pytest.raises(ImportSourceError, match="expected a JSON object at the top of the file"):
        import_servers("cursor", tmp_path / "list.json", machine=MACHINE)


def test_unknown_kind() -> None:
    with pytest.raises(
        ValueError, match="unknown import source 'zed'; choose one of: claude-desktop"
    ):
        import_servers("zed", None)


def test_comments_and_trailing_commas_keep_positions() -> None:
    text = '{ // note\n  "a": "x // not a comment", /* block\n */ "b": [1, 2,],\n}'
    stripped = strip_jsonc(text)
    assert len(stripped) == len(text)
    assert stripped.count("\n") == text.count("\n")
    assert '"x // not a comment"' in stripped
    assert json.loads(stripped) == {"a": "x // not a comment", "b": [1, 2]}


def test_escaped_quote_inside_string() -> None:
    text = '{"a": "say \\"hi\\" // here", "b": 1,}'
    assert json.loads(strip_jsonc(text)) == {"a": 'say "hi" // here', "b": 1}


@pytest.mark.parametrize(
    ("raw", "valid"),
    [
        ("github.com", "github-com"),
        ("My Server", "My-Server"),
        ("a__b", "a_b"),
        ("café", "cafe"),
        ("--x--", "--x--"),  # valid as written: never renamed
        ("-- x --", "x"),
        ("...", "server"),
        ("ok_name-1", "ok_name-1"),
    ],
)
def test_names_become_valid(raw: str, valid: str) -> None:
    assert to_valid_name(raw) == valid
    assert is_valid_name(valid)


def test_server_entry_shapes(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text(
        """{"mcpServers": {
          "both": {"command": "run", "args": [1, true], "url": "https://x.example/mcp"},
          "list-command": {"command": ["python", "-m", "srv"], "args": ["--v"]},
          "http-cmd": {"type": "http", "command": "x", "url": "https://h.example/mcp"},
          "bad-url": {"url": "ftp://files.example"},
          "not-object": "npx server",
          "null-env": {"command": "a", "env": {"K": null}}
        }}"""
    )
    result = import_servers("claude-desktop", path, machine=MACHINE)
    assert result.servers == [
        ("both", {"command": "run", "args": ["1", "true"]}),
        ("list-command", {"command": "python", "args": ["-m", "srv", "--v"]}),
        ("http-cmd", {"url": "https://h.example/mcp"}),
        ("null-env", {"command": "a"}),
    ]
    assert result.problems == [
        "both.url: not used by a command (stdio) server; not converted",
        "http-cmd.command: not used by a remote server; not converted",
        "bad-url.url: 'ftp://files.example' is not an http:// or https:// URL; server not imported",
        "not-object: expected an object, found text; server not imported",
        "null-env.env.K: expected text, found null; not converted",
    ]


@pytest.mark.parametrize(
    ("kind", "fixture"),
    [
        ("claude-desktop", "claude_desktop_config.json"),
        ("claude-code", "claude.json"),
        ("vscode", "vscode_workspace/.vscode/mcp.json"),
        ("cursor", "cursor_mcp.json"),
    ],
)
def test_every_converted_fixture_loads_without_a_diagnostic(
    tmp_path: Path, kind: str, fixture: str
) -> None:
    from ruamel.yaml import YAML

    from portico.config import Scope, load_files

    fixtures = Path(__file__).parent / "import_fixtures"
    result = import_servers(kind, fixtures / fixture, machine=MACHINE)
    path = tmp_path / "config.yaml"
    with path.open("w") as out:
        YAML().dump({"mcp_servers": dict(result.servers)}, out)
    config = load_files([(path, Scope.GLOBAL)])
    assert [str(d) for d in config.diagnostics] == []
    assert [s.name for s in config.servers] == result.names()
    for name, fields in result.servers:
        spec = config.server(name)
        assert spec is not None
        assert spec.url == fields.get("url")
        assert spec.command == fields.get("command")
        assert spec.headers_dict == fields.get("headers", {})
        assert spec.env_dict == fields.get("env", {})
        assert spec.enabled == fields.get("enabled", True)
        assert spec.transport.value == fields.get(
            "transport", "stdio" if "command" in fields else "http"
        )


# -- properties ---------------------------------------------------------------------------


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=12),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=40))
def test_any_name_becomes_a_valid_one(raw: str) -> None:
    name = to_valid_name(raw)
    assert is_valid_name(name)
    if is_valid_name(raw):
        assert to_valid_name(raw) == raw


@settings(max_examples=60, deadline=None)
@given(_json_values, st.sampled_from(["// c\n", "/* c */", "/* a\n b */", ""]))
def test_comments_and_trailing_commas_never_change_the_data(value: object, comment: str) -> None:
    text = json.dumps(value, indent=1)
    # A trailing comma before every closing bracket, a comment after every line break.
    decorated = re.sub(r"\n(\s*)([\]}])", r",\n\1\2", text).replace("\n", "\n" + comment)
    assert json.loads(strip_jsonc(decorated)) == value
