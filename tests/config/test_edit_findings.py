"""Regressions of issue 12: each finding, as the exact lines an edit changes.

Hunks are zero-context unified diffs (see ``test_edit_roundtrip.hunks``) of a file before
and after one command or one ``ConfigDocument`` edit.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from portico import paths
from portico.cli.main import main
from portico.config.document import ConfigDocument, EditError
from portico.config.load import load, parse_text
from tests.config.test_edit_roundtrip import hunks

# Text a person may type for a string key, each of which some reader would take as
# something else (a comment, a number, a bool, null, a mapping...) if written plain.
SHAPES = [
    "abc #def",
    "0123",
    "0x1F",
    "1.10",
    "1e3",
    "yes",
    "no",
    "null",
    "~",
    "true",
    "a: b",
    "x:",
    " leading",
    "trailing ",
    "",
    "line1\nline2",
    "!pa$$word",
    "*star",
    "&amp",
    "@at",
    "%p",
    "[y]",
    "{x}",
    "a,b",
    "- item",
    "? q",
    "12:30",
    ".inf",
    "'single",
    '"double',
    "tab\there",
    "\x7f",
    "é ü 中",
    "${keyring:k}",
]

TOML = '# servers\n[mcp.a]\ncommand = ["x"]  # launcher\nenvironment = { KEEP = "1" }\n'
YAML = "# servers\nmcp_servers:\n  a:\n    command: x  # launcher\n    env:\n      KEEP: '1'\n"
TOML_URL = '[mcp.h]\nurl = "https://h.example/mcp"\n'
YAML_URL = "mcp_servers:\n  h:\n    url: https://h.example/mcp\n"


def write(ext: str, text: str) -> Path:
    path = paths.paths().global_toml if ext == "toml" else paths.paths().global_yaml
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def spec(name: str):  # type: ignore[no-untyped-def]
    found = load().server(name)
    assert found is not None, [str(d) for d in load().diagnostics]
    return found


# -- 1. values reload exactly as typed ----------------------------------------------------


@pytest.mark.parametrize("ext", ["toml", "yaml"])
@pytest.mark.parametrize("value", SHAPES)
def test_config_set_writes_a_string_that_reloads_as_typed(ext: str, value: str) -> None:
    path = write(ext, TOML if ext == "toml" else YAML)
    key = "environment" if ext == "toml" else "env"
    assert main(["config", "set", f"a.{key}.V", value]) == 0
    assert dict(spec("a").env) == {"KEEP": "1", "V": value}
    assert main(["config", "set", "a.cwd", value]) == (0 if value.strip() else 1)
    if value.strip():
        assert spec("a").cwd == value
    assert "# launcher" in path.read_text(encoding="utf-8")


@pytest.mark.parametrize("ext", ["toml", "yaml"])
@pytest.mark.parametrize("value", SHAPES)
def test_mcp_add_env_and_header_reload_as_typed(ext: str, value: str) -> None:
    write(ext, TOML if ext == "toml" else YAML)  # the new servers join this file
    assert main(["mcp", "add", "e", "--env", f"V={value}", "--", "npx", "pkg"]) == 0
    assert dict(spec("e").env) == {"V": value}
    if value.strip():
        assert (
            main(["mcp", "add", "h", "--url", "https://h.example/mcp", "--header", f"X-V={value}"])
            == 0
        )
        assert dict(spec("h").headers) == {"X-V": value}


def test_yaml_hash_value_is_quoted_exactly_where_it_is_set() -> None:
    path = write("yaml", YAML)
    assert main(["config", "set", "a.env.HASH", "abc #def"]) == 0
    assert main(["config", "set", "a.env.PIN", "0123"]) == 0
    assert hunks(YAML, path.read_text()) == (
        '@@ -6,0 +7,2 @@\n+      HASH: "abc #def"\n+      PIN: "0123"\n'
    )


def test_toml_string_key_keeps_trailing_zeros() -> None:
    path = write("toml", TOML)
    assert main(["config", "set", "a.environment.V", "1.10"]) == 0
    assert hunks(TOML, path.read_text()) == (
        '@@ -4 +4 @@\n-environment = { KEEP = "1" }\n+environment = { KEEP = "1", V = "1.10" }\n'
    )


@pytest.mark.parametrize(
    ("ext", "key", "text", "message"),
    [
        ("toml", "timeout", "1.10", "a.timeout: must be a whole number of milliseconds, not '1.1"),
        ("toml", "timeout", "abc", "a.timeout: must be a whole number of milliseconds, not 'ab"),
        ("yaml", "timeout", "soon", "a.timeout: must be a number of seconds, not 'soon'"),
        ("yaml", "enabled", "yes", "a.enabled: must be true or false, not 'yes'"),
        ("toml", "command", "npx -y foo", "a.command: must be an array in mcp.toml"),
        ("yaml", "tools.include", "read_*", "a.tools.include: must be a list of strings"),
        ("toml", "env", "5", "a.env: must be a table of names to strings"),
        ("yaml", "timout", "5", "a.timout: not a key of a server; did you mean timeout?"),
    ],
)
def test_a_non_string_key_refuses_text_of_another_type(
    ext: str, key: str, text: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    original = TOML if ext == "toml" else YAML
    path = write(ext, original)
    code = main(["config", "set", f"a.{key}", text])
    err = capsys.readouterr().err
    assert code == 1 and message in err, err
    assert str(path) in err
    assert path.read_text() == original


def test_the_editor_reads_typed_text_by_the_schema() -> None:
    doc = ConfigDocument.from_text(TOML, Path("mcp.toml"))
    assert doc.value_for("a", "timeout", "30000") == 30000
    assert doc.value_for("a", ("environment", "V"), "0x1F") == "0x1F"
    assert doc.value_for("a", "protocol", "legacy") == "legacy"
    with pytest.raises(EditError, match="must be true or false, not 'on'"):
        doc.value_for("a", "enabled", "on")


# -- 2. multi-line flow maps ------------------------------------------------------------------

FLOW = """\
mcp_servers:
  fs: {
    command: npx,   # launcher
    args: [-y, "@modelcontextprotocol/server-filesystem"],  # the package
    timeout: 30
  }
  one: {command: uvx, args: [fetch]}   # one line
"""


def test_edits_inside_a_multi_line_flow_map_keep_its_lines_and_comments() -> None:
    doc = ConfigDocument.from_text(FLOW, Path("config.yaml"))
    doc.set("fs", "timeout", 45)
    doc.set("fs", "enabled", False)
    doc.set("one", ("env", "K"), "abc #d")
    assert hunks(FLOW, doc.text()) == (
        "@@ -5 +5,2 @@\n"
        "-    timeout: 30\n"
        "+    timeout: 45,\n"
        "+    enabled: false\n"
        "@@ -7 +8 @@\n"
        "-  one: {command: uvx, args: [fetch]}   # one line\n"
        '+  one: {command: uvx, args: [fetch], env: {K: "abc #d"}}   # one line\n'
    )
    doc.unset("fs", "args")
    doc.unset("fs", "enabled")
    assert hunks(FLOW, doc.text()) == (
        "@@ -4,2 +4 @@\n"
        '-    args: [-y, "@modelcontextprotocol/server-filesystem"],  # the package\n'
        "-    timeout: 30\n"
        "+    timeout: 45\n"
        "@@ -7 +6 @@\n"
        "-  one: {command: uvx, args: [fetch]}   # one line\n"
        '+  one: {command: uvx, args: [fetch], env: {K: "abc #d"}}   # one line\n'
    )


# -- 3. aliases ---------------------------------------------------------------------------

ALIASED = """\
shared: &env
  LOG: info
mcp_servers:
  alpha:
    command: a
    env: *env   # the shared set
  gamma: {command: g, env: *env}
  beta:
    command: b
    env: &own
      K: v
  delta:
    command: d
    env: *own
"""


def test_an_edit_through_an_alias_changes_only_the_named_server(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = write("yaml", ALIASED)
    assert main(["config", "set", "gamma.env.NEW", "x"]) == 0
    err = capsys.readouterr().err
    assert hunks(ALIASED, path.read_text()) == (
        "@@ -7 +7 @@\n"
        "-  gamma: {command: g, env: *env}\n"
        "+  gamma: {command: g, env: {LOG: info, NEW: x}}\n"
    )
    notes = [line for line in err.splitlines() if line.startswith("note:")]
    assert notes == [
        "note: gamma.env was the alias *env; gamma now has its own copy, the other "
        "entries using *env are unchanged"
    ]
    assert dict(spec("alpha").env) == {"LOG": "info"}
    assert dict(spec("gamma").env) == {"LOG": "info", "NEW": "x"}


def test_an_anchor_other_servers_use_is_refused_with_the_reason(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = write("yaml", ALIASED)
    assert main(["config", "set", "beta.env.K", "w"]) == 1
    assert (
        "beta.env is the anchor &own, which other entries use (*own); editing it would "
        "change them too" in capsys.readouterr().err
    )
    assert path.read_text() == ALIASED


MERGED = """\
defaults: &d
  oauth:
    client_id: base
    callback_port: 33418
mcp_servers:
  sentry:
    <<: *d
    url: https://mcp.sentry.dev/mcp
"""


def test_a_nested_edit_through_a_merge_key_keeps_the_merged_siblings() -> None:
    doc = ConfigDocument.from_text(MERGED, Path("config.yaml"))
    doc.set("sentry", ("oauth", "client_id"), "mine")
    assert doc.get("sentry", "oauth") == {"client_id": "mine", "callback_port": 33418}
    assert parse_text(doc.text(), Path("config.yaml")).errors == ()
    assert doc.text().startswith(MERGED.split("mcp_servers:")[0])  # the anchor is untouched
    assert len(doc.notes) == 1 and "sentry.oauth came from a merged anchor" in doc.notes[0]


# -- 4. rename on dotted keys and sub-tables written apart ------------------------------------

DOTTED = """\
[mcp]
# fs is written with dotted keys
fs.command = ["npx", "-y", "@modelcontextprotocol/server-filesystem"]  # launcher
fs.timeout = 5000
memory = { command = ["npx", "-y", "@modelcontextprotocol/server-memory"] }
"""

APART = """\
[mcp.a]
command = ["a"]

[mcp.b]
command = ["b"]

# a's OAuth, written after b
[mcp.a.oauth]
client_id = "x"

# c
[mcp.c]
command = ["c"]
"""


def test_rename_of_a_dotted_key_server() -> None:
    doc = ConfigDocument.from_text(DOTTED, Path("mcp.toml"))
    doc.rename_server("fs", "files")
    assert hunks(DOTTED, doc.text()) == (
        "@@ -3,2 +3,2 @@\n"
        '-fs.command = ["npx", "-y", "@modelcontextprotocol/server-filesystem"]  # launcher\n'
        "-fs.timeout = 5000\n"
        '+files.command = ["npx", "-y", "@modelcontextprotocol/server-filesystem"]  # launcher\n'
        "+files.timeout = 5000\n"
    )
    assert doc.server_names() == ["files", "memory"]


def test_rename_leaves_a_sub_table_written_apart_where_it_is_with_its_comment() -> None:
    doc = ConfigDocument.from_text(APART, Path("mcp.toml"))
    doc.rename_server("a", "z")
    assert hunks(APART, doc.text()) == (
        "@@ -1 +1 @@\n-[mcp.a]\n+[mcp.z]\n@@ -8 +8 @@\n-[mcp.a.oauth]\n+[mcp.z.oauth]\n"
    )
    assert doc.get("z", "oauth") == {"client_id": "x"}


def test_rename_through_the_cli_on_dotted_keys(capsys: pytest.CaptureFixture[str]) -> None:
    path = write("toml", DOTTED)
    assert main(["mcp", "rename", "fs", "files"]) == 0
    assert spec("files").command == "npx"
    assert "fs.timeout" not in path.read_text()


# -- 5. remove keeps the blank line before what follows --------------------------------------

ONLY = "mcp_servers:\n  a:\n    command: x\n\n# other tools' settings\nother: 1\n"


def test_removing_the_only_yaml_server_keeps_the_blank_line_before_the_next_comment() -> None:
    doc = ConfigDocument.from_text(ONLY, Path("config.yaml"))
    doc.remove_server("a")
    assert hunks(ONLY, doc.text()) == (
        "@@ -1,3 +1 @@\n-mcp_servers:\n-  a:\n-    command: x\n+mcp_servers: {}\n"
    )


# -- 6. bad targets --------------------------------------------------------------------------


def test_mcp_add_with_a_bad_url_writes_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    path = write("toml", TOML)
    assert main(["mcp", "add", "x", "--url", "notaurl"]) == 1
    err = capsys.readouterr().err
    assert "not written: server 'x' would not start" in err and "x.url" in err
    assert path.read_text() == TOML


def test_an_unparsable_file_gives_its_parse_error_not_no_server(
    capsys: pytest.CaptureFixture[str],
) -> None:
    broken = '[mcp.a]\ncommand = ["x"\ntimeout = 5\n'
    path = write("toml", broken)
    assert main(["config", "set", "a.timeout", "5"]) == 1
    err = capsys.readouterr().err
    assert f"{path}:3" in err and "not valid TOML" in err
    assert "no server named" not in err


def test_a_truncated_file_says_where_it_ends(capsys: pytest.CaptureFixture[str]) -> None:
    path = write("toml", '[mcp.a]\ncommand = ["x", "y')
    assert main(["mcp", "add", "b", "--", "npx", "pkg"]) == 1
    err = capsys.readouterr().err
    assert "\\x00" not in err
    assert f"{path}:2:" in err and "unexpected end of file" in err


def test_a_newer_version_is_not_edited(capsys: pytest.CaptureFixture[str]) -> None:
    newer = 'version = 99\n[mcp.a]\ncommand = ["x"]\n'
    path = write("toml", newer)
    assert main(["config", "set", "a.timeout", "5000"]) == 1
    assert "version = 99 is newer than this build of Portico reads" in capsys.readouterr().err
    assert path.read_text() == newer


def test_a_duplicate_key_in_an_inline_table_has_line_and_column() -> None:
    text = '[mcp.a]\ncommand = ["x"]\nenvironment = { A = "1", B = "2", A = "3" }\n'
    (error,) = parse_text(text, Path("mcp.toml")).errors
    assert (error.line, error.column) == (3, 35)
    assert 'Key "A" already exists' in error.message


# -- 9. messages ---------------------------------------------------------------------------


def test_command_messages_in_toml() -> None:
    spaced = parse_text('[mcp.a]\ncommand = "npx -y foo"\n', Path("mcp.toml"))
    (warning,) = spaced.warnings
    assert warning.line == 2
    assert 'to pass arguments, write command = ["npx", "-y", "foo"]' in warning.message
    bad_item = parse_text('[mcp.a]\ncommand = [\n  "npx",\n  5,\n]\n', Path("mcp.toml"))
    (error,) = bad_item.errors
    assert (error.line, error.key) == (4, "command.1")
    assert error.message == "must be a string (argument 1 of command), not 5"


def test_a_tagged_secret_value_is_described_without_showing_it() -> None:
    text = "mcp_servers:\n  a:\n    url: https://a.example\n    headers:\n      X: !pa$$word\n"
    (error,) = parse_text(text, Path("config.yaml")).errors
    assert error.message == "must be a string, not a tagged value (quote it to make it a string)"
    assert "pa$$word" not in str(error)


def test_directory_with_a_command_says_what_conflicts(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        ["mcp", "add", "f", "--preset", "filesystem", "--directory", "/data", "--", "node", "x.js"]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert "a command after -- replaces that command" in err
    assert "only for presets that take folders" not in err
