"""Neutral (YAML-spelled) server fields -> each dialect's spelling and units."""

from __future__ import annotations

from pathlib import Path

from portico.config.document import ConfigDocument
from portico.config.load import parse_text
from portico.config.model import Dialect
from portico.config.translate import to_dialect, to_toml

NEUTRAL = {
    "command": "npx",
    "args": ["-y", "@modelcontextprotocol/server-github"],
    "env": {"GITHUB_TOKEN": "${keyring:github}"},
    "timeout": 45,
    "connect_timeout": 20.5,
    "idle_timeout_seconds": 600,
    "sampling": {"timeout": 30, "max_rpm": 5},
    "elicitation": {"timeout": 120},
    "tool_costs": {"search": {"credits": [1, 3], "note": "per page"}},
}


def test_neutral_to_toml_spelling_and_milliseconds() -> None:
    assert to_toml(NEUTRAL) == {
        "command": ["npx", "-y", "@modelcontextprotocol/server-github"],
        "environment": {"GITHUB_TOKEN": "${keyring:github}"},
        "timeout": 45000,
        "connect_timeout": 20500,
        "idle_timeout_seconds": 600,  # named in seconds: stays seconds
        "sampling": {"timeout": 30000, "max_rpm": 5},
        "elicitation": {"timeout": 120000},
        "tool_costs": {"search": {"credits": [1, 3], "note": "per page"}},
    }


def test_oauth_keys_take_their_toml_names() -> None:
    fields = {
        "url": "https://mcp.example.com/mcp",
        "oauth": {
            "client_id": "c",
            "redirect_port": 8765,
            "redirect_host": "localhost",
            "timeout": 900,
        },
    }
    assert to_toml(fields)["oauth"] == {
        "client_id": "c",
        "callback_port": 8765,
        "callback_hostname": "localhost",
        "timeout": 900000,
    }


def test_neutral_stays_as_it_is_for_yaml_and_a_command_list_is_split() -> None:
    assert to_dialect(NEUTRAL, Dialect.YAML) == NEUTRAL
    assert to_dialect(
        {"command": ["uvx", "mcp-server-fetch"], "environment": {"A": "1"}}, Dialect.YAML
    ) == {
        "command": "uvx",
        "args": ["mcp-server-fetch"],
        "env": {"A": "1"},
    }


def test_both_dialects_load_to_the_same_server() -> None:
    """add_server in either dialect gives the same ServerSpec (units and spellings agree)."""
    specs = []
    for name in ("mcp.toml", "config.yaml"):
        doc = ConfigDocument.from_text("", Path(name))
        doc.add_server("github", NEUTRAL)
        config = parse_text(doc.text(), Path(name))
        assert config.errors == (), config.errors
        specs.append(config.server("github"))
    toml_spec, yaml_spec = specs
    assert toml_spec is not None and yaml_spec is not None
    assert toml_spec.canonical() == yaml_spec.canonical()
    assert toml_spec.timeout == 45.0 and toml_spec.connect_timeout == 20.5
    assert toml_spec.args == ("-y", "@modelcontextprotocol/server-github")


def test_fields_by_logical_name_in_model_units() -> None:
    toml = ConfigDocument.from_text(
        '[mcp.a]\nurl = "https://a"\ntimeout = 5000\n', Path("mcp.toml")
    )
    yaml = ConfigDocument.from_text(
        "mcp_servers:\n  a:\n    url: https://a\n    timeout: 5\n", Path("config.yaml")
    )
    for doc in (toml, yaml):
        assert doc.get_field("a", "timeout") == 5
        doc.set_field("a", "timeout", 7.5)
        doc.set_field("a", "oauth.callback_port", 8080)
        doc.set_field("a", "sampling.timeout", 12)
        assert doc.get_field("a", "oauth.callback_port") == 8080
        assert doc.get_field("a", "sampling.timeout") == 12
        spec = doc.check().server("a")
        assert spec is not None and spec.timeout == 7.5 and spec.sampling.timeout == 12
        assert doc.get("a", "timeout") == (7500 if doc is toml else 7.5)
        assert spec.oauth is not None and spec.oauth.callback_port == 8080
        assert doc.unset_field("a", "timeout") is True
    assert toml.text() == (
        '[mcp.a]\nurl = "https://a"\noauth = { callback_port = 8080 }\n'
        "sampling = { timeout = 12000 }\n"
    )
    assert "    redirect_port: 8080\n" in yaml.text()
