"""ConfigDocument over config.yaml: indentation styles, flow collections, empty maps."""

from __future__ import annotations

from pathlib import Path

import pytest
from ruamel.yaml import YAML

from portico.config.document import ConfigDocument, DocumentParseError, EditError
from portico.config.load import parse_text


def doc(text: str) -> ConfigDocument:
    return ConfigDocument.from_text(text, Path("config.yaml"))


def safe(text: str) -> object:
    return YAML(typ="safe").load(text)


FOUR = """\
# four-space file, dashes at column 0 of their parent
other_tool:
    theme: dark

mcp_servers:
    files:
        command: npx
        args:
        - -y
        - server-filesystem
"""


def test_new_blocks_use_the_files_own_indentation() -> None:
    d = doc(FOUR)
    d.set("files", "env.ROOT", "/tmp")
    d.add_server("memory", {"command": "npx", "args": ["-y", "server-memory"]})
    assert d.text() == FOUR + (
        "        env:\n"
        "            ROOT: /tmp\n"
        "    memory:\n"
        "        command: npx\n"
        "        args: [-y, server-memory]\n"
    )
    d.set("files", "args", ["a", "b"])  # a block list replaced by a flow list in place
    assert "        args: [a, b]\n        env:\n" in d.text()


def test_flow_mappings_stay_flow_and_keep_other_lines() -> None:
    text = (
        "mcp_servers:\n"
        "  web: {url: 'https://a.example.com/mcp', headers: {X-Team: core}}  # compact\n"
        "  # the next one is long-hand\n"
        "  b:\n"
        "    url: https://b.example.com/mcp\n"
    )
    d = doc(text)
    d.set("web", "timeout", 10)
    d.set("web", "headers.X-Env", "prod")
    lines = d.text().splitlines(True)
    assert lines[1].startswith("  web: {url: 'https://a.example.com/mcp', headers: {X-Team: core,")
    assert "timeout: 10" in lines[1] and "X-Env: prod" in lines[1]
    assert lines[2:] == text.splitlines(True)[2:]
    assert safe(d.text())["mcp_servers"]["web"]["headers"] == {"X-Team": "core", "X-Env": "prod"}


def test_a_line_ruamel_would_reformat_is_kept_when_another_is_edited() -> None:
    # `b` uses a deeper indentation than the rest: a plain dump would normalise it
    text = (
        "mcp_servers:\n"
        "  a:\n"
        "    url: https://a.example.com/mcp\n"
        "    timeout: 5\n"
        "  b:\n"
        "      url:    https://b.example.com/mcp\n"
    )
    d = doc(text)
    d.set("a", "timeout", 9)
    assert d.text() == text.replace("timeout: 5", "timeout: 9")


def test_emptied_maps_become_braces_not_nulls() -> None:
    d = doc("mcp_servers:\n  a:\n    url: https://a\n    headers:\n      X: y  # only one\n")
    d.unset("a", "headers.X")
    assert d.text() == "mcp_servers:\n  a:\n    url: https://a\n    headers: {}\n"
    d.remove_server("a")
    assert d.text() == "mcp_servers: {}\n"
    d.add_server("b", {"url": "https://b"})
    assert d.text() == "mcp_servers:\n  b:\n    url: https://b\n"


def test_adding_where_mcp_servers_is_missing_or_null() -> None:
    d = doc("# other tool\nmodel: x  # keep\n")
    d.add_server("a", {"url": "https://a"})
    assert d.text() == "# other tool\nmodel: x  # keep\n\nmcp_servers:\n  a:\n    url: https://a\n"
    d = doc("mcp_servers:\nmodel: x\n")
    d.add_server("a", {"url": "https://a"})
    assert d.text() == "mcp_servers:\n  a:\n    url: https://a\nmodel: x\n"


def test_rename_keeps_quotes_and_comments() -> None:
    d = doc(
        'mcp_servers:\n  "alpha":   # quoted\n    url: https://a\n  beta:\n    url: https://b\n'
    )
    d.rename_server("alpha", "one")
    d.rename_server("beta", "two")
    assert d.text() == (
        'mcp_servers:\n  "one":   # quoted\n    url: https://a\n  two:\n    url: https://b\n'
    )


def test_spellings_of_the_other_dialect_map_to_yaml_ones() -> None:
    d = doc("mcp_servers:\n  a:\n    url: https://a\n")
    d.set("a", "environment.X", "1")  # TOML spelling -> env
    d.set("a", "oauth.callback_port", 8080)  # TOML spelling -> redirect_port
    assert safe(d.text())["mcp_servers"]["a"] == {
        "url": "https://a",
        "env": {"X": "1"},
        "oauth": {"redirect_port": 8080},
    }
    assert d.get("a", "env", "X") == "1"
    assert d.get("a", "oauth", "callback_port") == 8080


def test_settings_go_under_their_yaml_keys() -> None:
    d = doc("mcp_servers: {}\n")
    d.set_setting("defer_tools", 3)
    d.set_setting("approvals.mode", "off")
    assert safe(d.text()) == {
        "mcp_servers": {},
        "mcp": {"defer_tools": 3},
        "approvals": {"mode": "off"},
    }
    assert d.get_setting("defer_tools") == 3
    assert d.unset_setting("approvals.mode") is True
    config = parse_text(d.text(), Path("config.yaml"))
    assert config.settings.defer_tools == 3 and config.errors == ()


def test_parse_value_reads_yaml_or_falls_back_to_a_string() -> None:
    d = doc("mcp_servers: {}\n")
    assert d.parse_value("5") == 5
    assert d.parse_value("true") is True
    assert d.parse_value("[a, b]") == ["a", "b"]
    assert d.parse_value("{A: b}") == {"A": "b"}
    assert d.parse_value("https://x.example.com/mcp") == "https://x.example.com/mcp"
    assert d.parse_value("a: b: c") == "a: b: c"


def test_setting_into_a_scalar_is_refused_and_changes_nothing() -> None:
    text = "mcp_servers:\n  a:\n    url: https://a\n"
    d = doc(text)
    with pytest.raises(EditError, match=r"a\.url is a str, not a table"):
        d.set("a", "url.x", 1)
    assert d.text() == text


def test_new_file_header_and_not_a_mapping(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    d = ConfigDocument.open(path)
    assert d.text().startswith("# Portico configuration")
    d.add_server("a", {"command": "uvx", "args": ["mcp-server-fetch"]})
    d.save()
    config = parse_text(path.read_text(), path)
    assert [s.name for s in config.servers] == ["a"] and config.errors == ()
    path.write_text("- just\n- a list\n")
    with pytest.raises(DocumentParseError, match="not a mapping"):
        ConfigDocument.load(path)
    path.write_text("mcp_servers:\n  a: [\n")
    with pytest.raises(DocumentParseError) as caught:
        ConfigDocument.load(path)
    assert caught.value.line is not None


def test_merge_keys_are_overridden_not_edited_in_the_anchor() -> None:
    text = (
        "x-defaults: &defaults\n  timeout: 30\n  lazy: true\n\n"
        "mcp_servers:\n  a:\n    <<: *defaults\n    url: https://a\n"
    )
    d = doc(text)
    assert d.get("a", "timeout") == 30  # read through the merge
    d.set("a", "timeout", 5)  # written to the entry itself
    assert d.text() == text + "    timeout: 5\n"
    assert d.unset("a", "lazy") is False  # lives in the anchor, not in this entry
    assert safe(d.text())["x-defaults"] == {"timeout": 30, "lazy": True}
    assert safe(d.text())["mcp_servers"]["a"]["timeout"] == 5


def test_a_block_map_given_a_whole_mapping_keeps_what_follows() -> None:
    text = (
        "mcp_servers:\n  a:\n    url: https://a\n    tools:\n      include: [x]  # only x\n"
        "\n  # the next server\n  b:\n    url: https://b\n"
    )
    d = doc(text)
    d.set("a", "tools", {"exclude": ["y"], "prompts": False})
    assert d.text() == text.replace(
        "      include: [x]  # only x\n", "      exclude: [y]\n      prompts: false\n"
    )


def test_replacing_a_server_keeps_its_place_and_the_comment_above() -> None:
    text = (
        "mcp_servers:\n  # first\n  a:\n    url: https://a\n    timeout: 5\n\n"
        "  # second\n  b:\n    url: https://b\n"
    )
    d = doc(text)
    d.add_server("a", {"command": "uvx", "args": ["mcp-server-fetch"]}, replace=True)
    assert d.text() == text.replace(
        "    url: https://a\n    timeout: 5\n", "    command: uvx\n    args: [mcp-server-fetch]\n"
    )
