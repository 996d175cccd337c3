"""``portico model add`` edits the global config in place: into mcp.toml as a real
``[models.providers.NAME]`` table, into config.yaml as a block mapping, every other byte
kept; the file is chosen as ``portico mcp add`` chooses it."""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest

from portico.paths import paths
from tests.helpers.cli import run_cli

pytestmark = pytest.mark.slow  # runs portico as its own process

ADD = (
    "model",
    "add",
    "local",
    "--kind",
    "openai",
    "--base-url",
    "http://127.0.0.1:9/v1",
    "--models",
    "m1,m2",
    "--default",
    "m1",
)


def _hunks(before: str, after: str) -> list[str]:
    """The changed lines, as a unified diff without its headers."""
    diff = difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=1)
    return [line for line in diff if not line.startswith(("---", "+++"))]


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode())


def test_into_mcp_toml_a_provider_is_its_own_table(portico_home: Path) -> None:
    toml = paths().global_toml
    before = (
        "# my servers\n"
        "defer_tools = 5  # keep this\n"
        "\n"
        "[mcp.everything]   # the demo\n"
        'command = "node"\n'
        'args = [ "x" ]\n'
    )
    _write(toml, before)
    out = run_cli(portico_home, *ADD)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(f"Added model provider local to {toml}.")
    assert not paths().global_yaml.exists()
    assert _hunks(before, toml.read_text()) == [
        "@@ -2,2 +2,3 @@",
        " defer_tools = 5  # keep this",
        '+default_model = "local/m1"',
        " ",
        "@@ -6 +7,7 @@",
        ' args = [ "x" ]',
        "+",
        "+[models.providers.local]",
        '+kind = "openai"',
        '+base_url = "http://127.0.0.1:9/v1"',
        '+models = ["m1", "m2"]',
        '+default_model = "m1"',
    ]
    listed = run_cli(portico_home, "model", "list")
    assert f"local (openai) http://127.0.0.1:9/v1  — {toml}:9" in listed.stdout
    assert "* local/m1" in listed.stdout and listed.stderr == ""


def test_a_second_provider_follows_the_first_and_keeps_the_default(portico_home: Path) -> None:
    toml = paths().global_toml
    before = (
        'default_model = "cloud/big"\n'
        "\n"
        "[models.providers.cloud]  # the paid one\n"
        'kind = "anthropic"\n'
        'api_key = "${env:CLOUD_KEY}"\n'
        'models = ["big"]\n'
        "\n"
        "[mcp.everything]\n"
        'command = "node"\n'
    )
    _write(toml, before)
    _write(paths().global_yaml, "mcp_servers: {}\n")  # servers elsewhere do not matter
    out = run_cli(portico_home, *ADD)
    assert out.returncode == 0, out.stderr
    assert _hunks(before, toml.read_text()) == [  # next to the other provider
        "@@ -7,2 +7,8 @@",
        " ",
        "+[models.providers.local]",
        '+kind = "openai"',
        '+base_url = "http://127.0.0.1:9/v1"',
        '+models = ["m1", "m2"]',
        '+default_model = "m1"',
        "+",
        " [mcp.everything]",
    ]
    assert paths().global_yaml.read_text() == "mcp_servers: {}\n"


def test_an_inline_models_table_stays_inline(portico_home: Path) -> None:
    toml = paths().global_toml
    before = 'models = { providers = { cloud = { kind = "anthropic" } } }\n'
    _write(toml, before)
    out = run_cli(portico_home, *ADD)
    assert out.returncode == 0, out.stderr
    assert _hunks(before, toml.read_text()) == [
        "@@ -1 +1,2 @@",
        '-models = { providers = { cloud = { kind = "anthropic" } } }',
        '+models = { providers = { cloud = { kind = "anthropic" }, local = { kind = "openai", '
        'base_url = "http://127.0.0.1:9/v1", models = ["m1", "m2"], default_model = "m1" } } }',
        '+default_model = "local/m1"',
    ]


def test_into_config_yaml_where_the_servers_are(portico_home: Path) -> None:
    yaml = paths().global_yaml
    before = (
        "# my setup\nmcp_servers:\n  everything:   # the demo\n    command: node\n    args: [x]\n"
    )
    _write(yaml, before)
    out = run_cli(portico_home, *ADD)
    assert out.returncode == 0, out.stderr
    assert not paths().global_toml.exists()
    assert _hunks(before, yaml.read_text()) == [
        "@@ -5 +5,10 @@",
        "     args: [x]",
        "+",
        "+models:",
        "+  providers:",
        "+    local:",
        "+      kind: openai",
        "+      base_url: http://127.0.0.1:9/v1",
        "+      models: [m1, m2]",
        "+      default_model: m1",
        "+  default: local/m1",
    ]
    listed = run_cli(portico_home, "model", "list")
    assert f"{yaml}:9" in listed.stdout and listed.stderr == ""


def test_with_no_config_yet_the_provider_goes_to_mcp_toml(portico_home: Path) -> None:
    out = run_cli(portico_home, *ADD)
    assert out.returncode == 0, out.stderr
    assert paths().global_toml.read_text() == (
        "# Portico MCP servers (mcp.toml): one [mcp.NAME] table per server.\n"
        "# `portico config example mcp` lists every key with its default.\n"
        "\n"
        'default_model = "local/m1"\n'
        "\n"
        "[models.providers.local]\n"
        'kind = "openai"\n'
        'base_url = "http://127.0.0.1:9/v1"\n'
        'models = ["m1", "m2"]\n'
        'default_model = "m1"\n'
    )
