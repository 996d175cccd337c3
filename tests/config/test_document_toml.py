"""ConfigDocument over mcp.toml: the API, its errors, and TOML-specific styles."""

from __future__ import annotations

from pathlib import Path

import pytest

from portico.config.document import ConfigDocument, DocumentParseError, EditError
from portico.config.load import parse_text

SOURCE = """\
defer_tools = 5

[mcp.gh]
command = ["gh", "mcp-server"]
environment = {TOKEN="${env:GH}"}
oauth.client_id = "x"

[mcp.web]
url = "https://web.example.com/mcp"
"""


def doc(text: str = SOURCE) -> ConfigDocument:
    return ConfigDocument.from_text(text, Path("mcp.toml"))


def test_reading_values_as_plain_python() -> None:
    d = doc()
    assert d.server_names() == ["gh", "web"]
    assert d.has_server("web") and not d.has_server("nope")
    assert d.get("gh", "command") == ["gh", "mcp-server"]
    assert type(d.get("gh", "command")) is list
    assert d.get("gh", "environment") == {"TOKEN": "${env:GH}"}
    assert d.get("gh", "env", "TOKEN") == "${env:GH}"  # the YAML spelling finds it too
    assert d.get("gh", "oauth.client_id") == "x"
    assert d.get("gh", "timeout") is None
    assert d.get("web") == {"url": "https://web.example.com/mcp"}
    assert d.get_setting("defer_tools") == 5


def test_compact_inline_table_keeps_its_style() -> None:
    d = doc()
    d.set("gh", "env.LEVEL", "debug")  # env -> the existing `environment`
    assert 'environment = {TOKEN="${env:GH}", LEVEL="debug"}\n' in d.text()
    d.unset("gh", "environment.TOKEN")
    assert 'environment = {LEVEL="debug"}\n' in d.text()


def test_dotted_keys_stay_dotted() -> None:
    d = doc()
    d.set("gh", "oauth.callback_port", 33418)
    assert 'oauth.client_id = "x"\noauth.callback_port = 33418\n' in d.text()
    assert d.get("gh", "oauth") == {"client_id": "x", "callback_port": 33418}


def test_new_nested_keys_are_inline_tables_in_toml_spelling() -> None:
    d = doc()
    d.set("web", "env.A", "1")  # a new env is written `environment`
    d.set("web", "oauth.redirect_port", 8080)  # a new oauth key in TOML spelling
    d.set("web", ("tool_costs", "search"), {"credits": [1, 3], "note": "per page"})
    text = d.text()
    assert 'environment = { A = "1" }\n' in text
    assert "oauth = { callback_port = 8080 }\n" in text
    assert 'tool_costs = { search = { credits = [1, 3], note = "per page" } }\n' in text
    assert parse_text(text, Path("mcp.toml")).errors == ()


def test_setting_a_new_top_level_setting_goes_above_the_tables() -> None:
    d = doc("# header\n\n# the servers\n[mcp.a]\ncommand = ['a']\n")
    d.set_setting("defer_tools", 0)
    assert d.text() == "# header\n\ndefer_tools = 0\n\n# the servers\n[mcp.a]\ncommand = ['a']\n"
    with pytest.raises(EditError, match=r"profile is not a setting of this file; .*config\.yaml"):
        d.set_setting("profile", "work")


def test_errors_name_the_file_server_and_key() -> None:
    d = doc()
    with pytest.raises(
        EditError, match=r"mcp\.toml: no server named 'nope' \(servers here: gh, web\)"
    ):
        d.set("nope", "timeout", 1)
    with pytest.raises(EditError, match=r"gh\.command is a list, not a table"):
        d.set("gh", "command.x", 1)
    with pytest.raises(EditError, match="already exists"):
        d.add_server("gh", {"command": "x"})
    with pytest.raises(EditError, match="'__'"):
        d.add_server("a__b", {"command": "x"})
    with pytest.raises(EditError, match="contains a dot"):
        d.rename_server("gh", "g.h")
    with pytest.raises(EditError, match="already exists"):
        d.rename_server("gh", "web")
    assert d.text() == SOURCE  # nothing was changed by the refused edits


def test_unset_reports_whether_anything_was_there() -> None:
    d = doc()
    assert d.unset("gh", "timeout") is False
    assert d.unset("gh", "oauth.nothing") is False
    assert d.unset("gh", "command.sub") is False
    assert d.text() == SOURCE
    assert d.unset("gh", "oauth.client_id") is True
    assert "oauth" not in d.text()


def test_add_server_replace_and_neutral_fields() -> None:
    d = doc()
    d.add_server(
        "gh",
        {"command": "npx", "args": ["-y", "server-github"], "env": {"T": "${keyring:t}"}},
        replace=True,
    )
    assert d.server_names() == ["gh", "web"]  # replaced in its place
    assert d.get("gh") == {
        "command": ["npx", "-y", "server-github"],
        "environment": {"T": "${keyring:t}"},
    }


def test_rename_keeps_position_and_sub_tables() -> None:
    d = doc(
        "[mcp.a]\nurl = 'https://a'\n\n[mcp.a.tools]\ninclude = ['x']\n\n[mcp.b]\nurl = 'https://b'\n"
    )
    d.rename_server("a", "alpha")
    assert d.server_names() == ["alpha", "b"]
    assert d.text() == (
        "[mcp.alpha]\nurl = 'https://a'\n\n[mcp.alpha.tools]\ninclude = ['x']\n\n"
        "[mcp.b]\nurl = 'https://b'\n"
    )


def test_servers_as_inline_tables_under_one_mcp_table() -> None:
    d = doc('[mcp]\na = { url = "https://a" }  # first\nb = { url = "https://b" }\n')
    d.set("a", "timeout", 1000)
    d.remove_server("b")
    assert d.text() == '[mcp]\na = { url = "https://a", timeout = 1000 }  # first\n'


def test_adding_where_server_tables_and_an_mcp_table_are_written_apart() -> None:
    # [mcp.a] first, then an [mcp] table: tomlkit reads "mcp" as two tables at once
    d = doc('[mcp.a]\ncommand = ["x"]\n\n[mcp]\nb = { command = ["y"] }\n')
    d.add_server("new", {"command": "npx", "args": ["pkg"]})
    assert d.text() == (
        '[mcp.a]\ncommand = ["x"]\n\n[mcp.new]\ncommand = ["npx", "pkg"]\n\n'
        '[mcp]\nb = { command = ["y"] }\n'
    )
    assert [s.name for s in parse_text(d.text(), Path("mcp.toml")).servers] == ["a", "new", "b"]


def test_parse_value_reads_toml_or_falls_back_to_a_string() -> None:
    d = doc()
    assert d.parse_value("5000") == 5000
    assert d.parse_value("true") is True
    assert d.parse_value('["a", "b"]') == ["a", "b"]
    assert d.parse_value("{ A = 'b' }") == {"A": "b"}
    assert d.parse_value("https://x.example.com/mcp") == "https://x.example.com/mcp"
    assert d.parse_value("npx") == "npx"
    d.set("web", "headers", d.parse_value("{ X-Team = 'core' }"))
    assert "headers = { X-Team = 'core' }\n" in d.text()


def test_new_file_has_a_header_and_no_servers(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "mcp.toml"
    d = ConfigDocument.open(path)
    assert not d.exists_on_disk and d.server_names() == []
    assert "portico config example mcp" in d.text()
    d.add_server("everything", {"command": "npx", "args": ["-y", "server-everything"]})
    d.save()
    text = path.read_text()
    assert text.startswith("# Portico MCP servers")
    assert text.endswith('\n\n[mcp.everything]\ncommand = ["npx", "-y", "server-everything"]\n')
    assert parse_text(text, path).servers[0].command == "npx"


def test_a_file_that_does_not_parse_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "mcp.toml"
    path.write_text("[mcp.a]\ncommand = [\n")
    with pytest.raises(DocumentParseError) as caught:
        ConfigDocument.load(path)
    assert caught.value.line is not None
    assert str(path) in str(caught.value) and "fix the file by hand" in str(caught.value)
    with pytest.raises(FileNotFoundError):
        ConfigDocument.load(tmp_path / "none.toml")
    with pytest.raises(EditError, match="not a config file"):
        ConfigDocument.load(tmp_path / "mcp.json")


def test_diff_and_check_before_saving() -> None:
    d = doc()
    assert d.diff() == ""
    d.set("web", "timeout", 999999)
    assert "-url" not in d.diff() and "+timeout = 999999\n" in d.diff()
    errors = d.check().errors
    assert [(e.server, e.key) for e in errors] == [("web", "timeout")]
    assert "300000" in errors[0].message


def test_a_header_table_given_a_whole_mapping_is_refilled_in_place() -> None:
    text = (
        "[mcp.a]\nurl = 'https://a'\n\n  # filter\n  [mcp.a.tools]\n  include = ['x']\n"
        "\n# the next server\n[mcp.b]\nurl = 'https://b'\n"
    )
    d = doc(text)
    d.set("a", "tools", {"exclude": ["y"], "prompts": False})
    assert d.text() == text.replace("  include = ['x']\n", '  exclude = ["y"]\n  prompts = false\n')
