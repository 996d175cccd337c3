"""Importing Cursor's mcp.json."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from portico.config.importers import Machine, default_locations, import_servers

FIXTURES = Path(__file__).parent / "import_fixtures"
MACHINE = Machine("linux", Path("/home/ada"), {})


def test_servers_auth_and_variables() -> None:
    result = import_servers("cursor", FIXTURES / "cursor_mcp.json", machine=MACHINE)

    assert result.servers == [
        ("linear", {"url": "https://mcp.linear.app/sse", "transport": "sse"}),
        (
            "figma",
            {
                "url": "https://mcp.figma.com/mcp",
                "oauth": {
                    "client_id": "${env:FIGMA_CLIENT_ID}",
                    "client_secret": "${env:FIGMA_SECRET}",
                    "scope": "files:read file_comments:write",
                },
            },
        ),
        (
            "browser",
            {
                "command": "npx",
                "args": ["-y", "@browsermcp/mcp@latest"],
                "env": {"SITES": f"/home/ada{os.sep}sites"},
            },
        ),
        (
            "db-local",
            {"command": "python", "args": ["${workspaceFolder}/tools/db_mcp.py"], "enabled": False},
        ),
    ]
    assert result.problems == [
        "figma.auth.CLIENT_ID: Portico expands ${...} references in client_secret but not in "
        "client_id; kept as written, put the client id itself there",
        "browser.envFile: Portico does not read env files; copy the variables you need into "
        "env (use ${keyring:NAME} for secrets)",
        "db.local.args[0]: ${workspaceFolder} needs the workspace folder, which is unknown "
        "here (pass --project DIR); kept as literal text",
        "db.local: renamed to 'db-local' (Portico server names use ASCII letters, digits, "
        "'-' and '_', without '__' or dots)",
    ]
    assert result.notes == ["linear: the URL ends in /sse, so it was imported with transport: sse"]


def test_project_file_fills_in_the_workspace(tmp_path: Path) -> None:
    project = tmp_path / "shop"
    (project / ".cursor").mkdir(parents=True)
    shutil.copy(FIXTURES / "cursor_mcp.json", project / ".cursor" / "mcp.json")
    result = import_servers("cursor", project=project, machine=Machine("linux", tmp_path, {}))
    assert result.source == project / ".cursor" / "mcp.json"
    assert result.fields("db-local")["args"] == [f"{project.resolve()}/tools/db_mcp.py"]


def test_default_locations(tmp_path: Path) -> None:
    assert default_locations("cursor", machine=MACHINE) == [Path("/home/ada/.cursor/mcp.json")]
    assert default_locations("cursor", project=tmp_path, machine=MACHINE) == [
        tmp_path / ".cursor" / "mcp.json",
        Path("/home/ada/.cursor/mcp.json"),
    ]
    win = Machine("win32", Path("C:/Users/ada"), {})
    assert default_locations("cursor", machine=win) == [Path("C:/Users/ada/.cursor/mcp.json")]
