"""Importing VS Code's mcp.json: inputs become keyring references."""

from __future__ import annotations

import shutil
from pathlib import Path

from portico.config.importers import Machine, SecretToSet, default_locations, import_servers

FIXTURES = Path(__file__).parent / "import_fixtures"
MACHINE = Machine("linux", Path("/home/ada"), {})


def workspace_copy(tmp_path: Path) -> Path:
    workspace = tmp_path / "shop"
    shutil.copytree(FIXTURES / "vscode_workspace", workspace)
    return workspace


def test_servers_inputs_and_variables(tmp_path: Path) -> None:
    workspace = workspace_copy(tmp_path)
    result = import_servers("vscode", workspace / ".vscode" / "mcp.json", machine=MACHINE)

    assert result.servers == [
        (
            "Perplexity",
            {
                "command": "npx",
                "args": ["-y", "server-perplexity-ask"],
                "env": {"PERPLEXITY_API_KEY": "${keyring:perplexity-key}"},
            },
        ),
        (
            "github",
            {
                "url": "https://api.githubcopilot.com/mcp/",
                "headers": {"Authorization": "Bearer ${keyring:gh_token}"},
            },
        ),
        ("fetch", {"command": "uvx", "args": ["mcp-server-fetch"]}),
        (
            "workspace-files",
            {
                "command": "npx",
                "args": ["-y", "@modelcontextprotocol/server-filesystem", str(workspace.resolve())],
                "env": {"HOME_DIR": "/home/ada", "PROXY": "${env:HTTPS_PROXY}"},
            },
        ),
        (
            "legacy",
            {
                "url": "http://localhost:3001/sse",
                "transport": "sse",
                "headers": {"X-Region": "${keyring:region}"},
            },
        ),
        ("my-dev-server", {"command": "node", "args": ["build/index.js"]}),
    ]
    assert result.secrets == [
        SecretToSet("perplexity-key", "Perplexity API Key", ("Perplexity",)),
        SecretToSet("gh_token", "GitHub PAT", ("github",)),
        SecretToSet("region", "Region", ("legacy",)),
    ]
    assert [s.command() for s in result.secrets] == [
        "portico secret set perplexity-key",
        "portico secret set gh_token",
        "portico secret set region",
    ]
    assert result.problems == [
        "fetch.envFile: Portico does not read env files; copy the variables you need into "
        "env (use ${keyring:NAME} for secrets)",
        "workspace files: renamed to 'workspace-files' (Portico server names use ASCII "
        "letters, digits, '-' and '_', without '__' or dots)",
        "legacy.headers.X-Region: input 'region' is a pickString; written as "
        "${keyring:region}: store the value you would pick with `portico secret set region`",
        "my-dev-server.dev: VS Code's watch-and-debug settings for server development; "
        "not converted",
    ]


def test_undefined_input_and_unknown_variable_are_reported(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(
        '{"servers": {"s": {"command": "run", "args": ["${config:editor.font}"],'
        ' "env": {"KEY": "${input:api key}", "F": "${config:font}"}}}}'
    )
    result = import_servers("vscode", path, machine=MACHINE)
    assert result.servers == [
        (
            "s",
            {
                "command": "run",
                "args": ["${config:editor.font}"],
                "env": {"KEY": "${keyring:api-key}", "F": "$${config:font}"},
            },
        )
    ]
    assert result.problems == [
        "s.args[0]: ${config:editor.font} has no Portico equivalent; kept as literal text",
        "s.env.KEY: ${input:api key} is not defined in inputs; written as ${keyring:api-key}",
        "s.env.F: ${config:font} has no Portico equivalent; kept as literal text",
    ]
    assert result.secrets == [SecretToSet("api-key", "", ("s",))]


def test_user_file_needs_project_for_workspace_folder(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text('{"servers": {"fs": {"command": "fs-mcp", "args": ["${workspaceFolder}"]}}}')
    result = import_servers("vscode", path, machine=MACHINE)
    assert result.fields("fs") == {"command": "fs-mcp", "args": ["${workspaceFolder}"]}
    assert result.problems == [
        "fs.args[0]: ${workspaceFolder} needs the workspace folder, which is unknown here "
        "(pass --project DIR); kept as literal text"
    ]
    with_project = import_servers("vscode", path, project=tmp_path / "proj", machine=MACHINE)
    assert with_project.fields("fs")["args"] == [str((tmp_path / "proj").resolve())]
    assert with_project.problems == []


def test_settings_json_mcp_section(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(
        '{"editor.fontSize": 14, "mcp": {"servers": {"time": {"command": "uvx",'
        ' "args": ["mcp-server-time"]}}}}'
    )
    result = import_servers("vscode", path, machine=MACHINE)
    assert result.servers == [("time", {"command": "uvx", "args": ["mcp-server-time"]})]


def test_reference_outside_env_and_headers_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(
        '{"inputs": [{"type": "promptString", "id": "tok", "password": true}],'
        ' "servers": {"s": {"command": "run", "args": ["--token", "${input:tok}"]}}}'
    )
    result = import_servers("vscode", path, machine=MACHINE)
    assert result.fields("s") == {"command": "run", "args": ["--token", "${keyring:tok}"]}
    assert result.problems == [
        "s.args[1]: '${keyring:tok}' holds a ${...} reference, which Portico expands only in "
        "env and header values and client secrets; kept as written, edit it after the import"
    ]


def test_default_locations_workspace_first(tmp_path: Path) -> None:
    assert default_locations("vscode", project=tmp_path, machine=MACHINE) == [
        tmp_path / ".vscode" / "mcp.json",
        Path("/home/ada/.config/Code/User/mcp.json"),
    ]
    mac = Machine("darwin", Path("/Users/ada"), {})
    assert default_locations("vscode", machine=mac) == [
        Path("/Users/ada/Library/Application Support/Code/User/mcp.json")
    ]
    win = Machine("win32", Path("C:/Users/ada"), {"APPDATA": "C:/Users/ada/AppData/Roaming"})
    assert default_locations("vscode", machine=win) == [
        Path("C:/Users/ada/AppData/Roaming/Code/User/mcp.json")
    ]
