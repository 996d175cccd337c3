"""Importing Claude Desktop's claude_desktop_config.json."""

from __future__ import annotations

from pathlib import Path

from portico.config.importers import Machine, default_locations, import_servers

FIXTURES = Path(__file__).parent / "import_fixtures"
MACHINE = Machine("linux", Path("/home/ada"), {})


def test_every_server_and_field_is_converted_or_reported() -> None:
    result = import_servers(
        "claude-desktop", FIXTURES / "claude_desktop_config.json", machine=MACHINE
    )

    assert result.servers == [
        (
            "filesystem",
            {
                "command": "npx",
                "args": [
                    "-y",
                    "@modelcontextprotocol/server-filesystem",
                    "/Users/ada/Desktop",
                    "/Users/ada/Downloads",
                ],
            },
        ),
        (
            "github",
            {
                "command": "docker",
                "args": [
                    "run",
                    "-i",
                    "--rm",
                    "-e",
                    "GITHUB_PERSONAL_ACCESS_TOKEN",
                    "ghcr.io/github/github-mcp-server",
                ],
                "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_exampleexampleexample"},
            },
        ),
        (
            "weather-api",
            {
                "url": "https://weather.example.com/mcp",
                "headers": {"Authorization": "Bearer abc123"},
            },
        ),
        ("legacy-events", {"url": "https://events.example.com/sse", "transport": "sse"}),
        (
            "sqlite",
            {
                "command": "uvx",
                "args": ["mcp-server-sqlite", "--db-path", "/Users/ada/test.db"],
                "env": {"DEBUG": "1", "DB_DIR": "$${HOME}/db"},
            },
        ),
    ]
    names_rule = "Portico server names use ASCII letters, digits, '-' and '_', without '__' or dots"
    assert result.problems == [
        f"weather.api: renamed to 'weather-api' ({names_rule})",
        f"legacy events: renamed to 'legacy-events' ({names_rule})",
        "sqlite.env.DB_DIR: ${HOME} is not expanded by Claude Desktop, nor is it a Portico "
        "reference; written as '$${HOME}/db' (literal text). Write ${env:NAME} or "
        "${keyring:NAME} if you meant a variable",
        "sqlite.autoApprove: unknown field; not converted",
        "broken: has neither a command nor a url; server not imported",
    ]
    assert result.renamed == {"weather-api": "weather.api", "legacy-events": "legacy events"}
    assert result.skipped == []
    assert result.secrets == []
    better = (
        "holds a secret in plain text, as it did in Claude Desktop; better: store it with "
        "`portico secret set NAME` and write ${keyring:NAME} there"
    )
    assert result.notes == [
        f"github.env.GITHUB_PERSONAL_ACCESS_TOKEN {better}",
        f"weather.api.headers.Authorization {better}",
    ]
    assert result.source == FIXTURES / "claude_desktop_config.json"


def test_field_order_is_the_neutral_order() -> None:
    result = import_servers(
        "claude-desktop", FIXTURES / "claude_desktop_config.json", machine=MACHINE
    )
    assert list(result.fields("weather-api")) == ["url", "headers"]
    assert list(result.fields("github")) == ["command", "args", "env"]


def test_default_location_per_platform() -> None:
    assert default_locations("claude-desktop", machine=MACHINE) == [
        Path("/home/ada/.config/Claude/claude_desktop_config.json")
    ]
    xdg = Machine("linux", Path("/home/ada"), {"XDG_CONFIG_HOME": "/cfg"})
    assert default_locations("claude-desktop", machine=xdg) == [
        Path("/cfg/Claude/claude_desktop_config.json")
    ]
    mac = Machine("darwin", Path("/Users/ada"), {})
    assert default_locations("claude-desktop", machine=mac) == [
        Path("/Users/ada/Library/Application Support/Claude/claude_desktop_config.json")
    ]
    win = Machine("win32", Path("C:/Users/ada"), {"APPDATA": "C:/Users/ada/AppData/Roaming"})
    assert default_locations("claude-desktop", machine=win) == [
        Path("C:/Users/ada/AppData/Roaming/Claude/claude_desktop_config.json")
    ]


def test_default_location_is_read_when_no_path_is_given(tmp_path: Path) -> None:
    home = tmp_path / "home"
    target = home / ".config" / "Claude" / "claude_desktop_config.json"
    target.parent.mkdir(parents=True)
    target.write_text('{"mcpServers": {"memory": {"command": "npx", "args": ["m"]}}}')
    result = import_servers("claude-desktop", machine=Machine("linux", home, {}))
    assert result.source == target
    assert result.servers == [("memory", {"command": "npx", "args": ["m"]})]
