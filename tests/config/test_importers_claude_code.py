"""Importing Claude Code's ~/.claude.json (user-level and per-project) and .mcp.json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from portico.config.importers import Machine, default_locations, import_servers

FIXTURES = Path(__file__).parent / "import_fixtures"
CLAUDE_JSON = FIXTURES / "claude.json"
MACHINE = Machine("linux", Path("/home/ada"), {})

SENTRY = {"url": "https://mcp.sentry.dev/mcp"}
NOTES = {
    "command": "node",
    "args": ["/home/ada/notes-mcp/index.js"],
    "env": {"NOTES_TOKEN": "${env:NOTES_TOKEN}"},
}
ASANA = {
    "url": "https://mcp.asana.com/sse",
    "transport": "sse",
    "headers": {"X-Api-Key": "${env:ASANA_KEY}"},
}
POSTGRES = {
    "command": "npx",
    "args": ["-y", "@modelcontextprotocol/server-postgres", "postgresql://localhost/shop"],
}
STRIPE = {
    "url": "https://mcp.stripe.com",
    "headers": {"Authorization": "Bearer ${env:STRIPE_KEY}"},
    "oauth": {"client_id": "shop-client", "redirect_port": 8765},
}
INTERNAL = {"url": "https://internal.example.com/mcp", "enabled": False}
DEFAULT_PROBLEM = (
    "asana.headers.X-Api-Key: ${ASANA_KEY:-none}: Portico references have no default "
    "value; written as ${env:ASANA_KEY} (set ASANA_KEY, or put 'none' in its place)"
)
HELPER_PROBLEM = (
    "internal.headersHelper: runs a command to make the headers; Portico has no "
    "equivalent, so write the headers with ${keyring:NAME} or ${env:NAME} references instead"
)


def test_all_user_and_project_servers_with_their_origin() -> None:
    result = import_servers("claude-code", CLAUDE_JSON, machine=MACHINE)

    assert result.servers == [
        ("sentry", SENTRY),
        ("notes", NOTES),
        ("asana", ASANA),
        ("postgres", POSTGRES),
        ("stripe", STRIPE),
        ("internal", INTERNAL),
        ("my_tool", {"command": "python", "args": ["-m", "mytool"]}),
    ]
    assert result.origins == {
        "sentry": "user",
        "notes": "user",
        "asana": "user",
        "postgres": "project /home/ada/work/shop",
        "stripe": "project /home/ada/work/shop",
        "internal": "project /home/ada/work/shop",
        "my_tool": "project /home/ada/play",
    }
    assert result.problems == [
        DEFAULT_PROBLEM,
        HELPER_PROBLEM,
        "my__tool: renamed to 'my_tool' (Portico server names use ASCII letters, digits, "
        "'-' and '_', without '__' or dots)",
        "chat.type: transport 'ws' is not supported by Portico (stdio, http, sse); "
        "server not imported",
    ]
    # The same server in a second project is imported once.
    assert result.skipped == [
        "sentry (from project /home/ada/play): the same server as 'sentry' imported above"
    ]


def test_project_selection_keeps_one_project_and_says_how_to_get_the_rest() -> None:
    result = import_servers(
        "claude-code",
        CLAUDE_JSON,
        project=Path("/home/ada/work/shop"),
        select="project",
        machine=MACHINE,
    )
    assert result.servers == [("postgres", POSTGRES), ("stripe", STRIPE), ("internal", INTERNAL)]
    assert result.problems == [HELPER_PROBLEM]
    assert result.skipped == [
        "3 user-level server(s) (sentry, notes, asana): import them with --scope global",
        "server(s) my__tool, sentry, chat of project /home/ada/play: import them with "
        "--project /home/ada/play",
    ]


def test_user_selection_leaves_every_project_out() -> None:
    result = import_servers("claude-code", CLAUDE_JSON, select="user", machine=MACHINE)
    assert result.names() == ["sentry", "notes", "asana"]
    assert result.problems == [DEFAULT_PROBLEM]
    assert result.skipped == [
        "server(s) postgres, stripe, internal of project /home/ada/work/shop: import them "
        "with --scope project --project /home/ada/work/shop",
        "server(s) my__tool, sentry, chat of project /home/ada/play: import them with "
        "--scope project --project /home/ada/play",
    ]


def test_different_servers_with_one_name_get_distinct_names(tmp_path: Path) -> None:
    path = tmp_path / "claude.json"
    path.write_text(
        json.dumps(
            {
                "mcpServers": {"db": {"command": "pg-mcp"}},
                "projects": {"/p": {"mcpServers": {"db": {"command": "sqlite-mcp"}}}},
            }
        )
    )
    result = import_servers("claude-code", path, machine=MACHINE)
    assert result.servers == [("db", {"command": "pg-mcp"}), ("db-2", {"command": "sqlite-mcp"})]
    assert result.renamed == {"db-2": "db"}
    assert result.problems == [
        "db: renamed to 'db-2' (another imported server is already called 'db')"
    ]


def test_project_mcp_json_is_read_with_the_user_file(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".claude.json").write_text(
        json.dumps({"projects": {str(tmp_path / "proj"): {"mcpServers": {"a": {"command": "a"}}}}})
    )
    project = tmp_path / "proj"
    project.mkdir()
    (project / ".mcp.json").write_text(
        '{"mcpServers": {"shared": {"type": "http", "url": "https://x.example/mcp"}}}'
    )
    result = import_servers(
        "claude-code", project=project, select="project", machine=Machine("linux", home, {})
    )
    assert result.servers == [
        ("a", {"command": "a"}),
        ("shared", {"url": "https://x.example/mcp"}),
    ]
    assert result.origins["shared"] == f"project file {project / '.mcp.json'}"


def test_default_locations_follow_claude_config_dir() -> None:
    assert default_locations("claude-code", machine=MACHINE) == [Path("/home/ada/.claude.json")]
    moved = Machine("linux", Path("/home/ada"), {"CLAUDE_CONFIG_DIR": "/opt/claude"})
    assert default_locations("claude-code", machine=moved)[0] == Path("/opt/claude/.claude.json")
    win = Machine("win32", Path("C:/Users/ada"), {})
    assert default_locations("claude-code", machine=win) == [Path("C:/Users/ada/.claude.json")]


def test_no_file_anywhere_is_a_clear_error(tmp_path: Path) -> None:
    from portico.config.importers import ImportSourceError

    with pytest.raises(ImportSourceError) as info:
        import_servers("claude-code", machine=Machine("linux", tmp_path, {}))
    assert str(info.value) == (
        f"no Claude Code config found (looked at {tmp_path / '.claude.json'}); "
        "pass the file with --from PATH"
    )


def test_a_project_mcp_json_given_with_from_is_all_project(tmp_path: Path) -> None:
    path = tmp_path / ".mcp.json"
    path.write_text(
        '{"mcpServers": {"api": {"type": "http", "url": "https://api.example/mcp",'
        ' "headers": {"X-Key": "${API_KEY}"}}}}'
    )
    result = import_servers("claude-code", path, select="project", machine=MACHINE)
    assert result.servers == [
        ("api", {"url": "https://api.example/mcp", "headers": {"X-Key": "${env:API_KEY}"}})
    ]
    assert result.origins == {"api": f"project file {path}"}
    assert result.skipped == []
