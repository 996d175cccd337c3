"""A project's chat settings (chat.model, chat.servers, chat.tools) in both dialects: a
project may narrow what a chat offers, never widen it, and may name a model only of a
provider you allowed for projects (``projects: true``)."""

from __future__ import annotations

from pathlib import Path

from portico.config import Scope, load_files

MINE_YAML = """\
models:
  providers:
    local: {kind: openai, base_url: "http://127.0.0.1:11434/v1", models: [qwen3], projects: true}
    paid: {kind: openai, api_key: "${env:PAID_KEY}", models: [big]}
  default: paid/big
chat:
  servers: [github, files, notes]
"""


def test_a_project_narrows_the_servers_and_picks_an_allowed_model_in_toml(tmp_path: Path) -> None:
    mine = tmp_path / "config.yaml"
    mine.write_text(MINE_YAML)
    theirs = tmp_path / "mcp.toml"
    theirs.write_text(
        'chat_model = "local/qwen3"\nchat_servers = ["files"]\nchat_tools = ["files__read_*"]\n'
    )
    config = load_files([(mine, Scope.GLOBAL), (theirs, Scope.PROJECT)])
    s = config.settings
    assert (s.chat_model, s.chat_servers, s.chat_tools) == (
        "local/qwen3",
        ("files",),
        ("files__read_*",),
    )
    assert config.diagnostics == ()


def test_a_project_cannot_widen_or_reach_a_paid_model_in_yaml(tmp_path: Path) -> None:
    mine = tmp_path / "config.yaml"
    mine.write_text(MINE_YAML + "  tools: [github__search]\n")
    theirs = tmp_path / "project.yaml"
    theirs.write_text("chat:\n  model: paid/big\n  servers: [files, shell]\n  tools: [github__*]\n")
    config = load_files([(mine, Scope.GLOBAL), (theirs, Scope.PROJECT)])
    s = config.settings
    assert (s.chat_model, s.chat_servers, s.chat_tools) == (
        None,
        ("github", "files", "notes"),
        ("github__search",),
    )
    shown = [str(d) for d in config.diagnostics]
    assert shown == [
        f"{theirs}:3: chat.servers: warning: ignored: a project file may tighten but never "
        "loosen chat.servers (your setting is ('github', 'files', 'notes')); set it in your "
        "own config.yaml if you mean it",
        f"{theirs}:4: chat.tools: warning: ignored: a project file may tighten but never "
        "loosen chat.tools (your setting is ('github__search',)); set it in your own "
        "config.yaml if you mean it",
        f"{theirs}:2: chat.model: warning: ignored: a project file may tighten but never "
        "loosen chat.model (paid/big: its provider is not allowed for projects); write "
        "projects: true on that provider in your own config if you mean it",
    ]


def test_an_empty_project_list_would_mean_all_and_is_refused(tmp_path: Path) -> None:
    mine = tmp_path / "config.yaml"
    mine.write_text(MINE_YAML)
    theirs = tmp_path / "project.yaml"
    theirs.write_text("chat:\n  servers: []\n  tools: 7\n")
    config = load_files([(mine, Scope.GLOBAL), (theirs, Scope.PROJECT)])
    assert config.settings.chat_servers == ("github", "files", "notes")
    shown = [str(d) for d in config.diagnostics]
    assert any("chat.tools: must be a list of names, not 7" in d for d in shown), shown
    assert any("loosen chat.servers" in d for d in shown), shown
