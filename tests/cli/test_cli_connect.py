"""``portico connect NAME``: the client's own token, and its config file pointed at the
endpoint with its comments kept; ``--remove`` undoes both."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from portico.auth.secret_store import SecretStore
from portico.config.importers.jsonc import strip_jsonc
from portico.gateway.clients import ClientBook
from portico.paths import paths
from tests.helpers.cli import run_cli

VSCODE = """{
  // servers I added by hand
  "servers": {
    "mine": {"command": "node", "args": ["x.js"]}, // keep me
  },
  "inputs": []
}
"""


def settings(port: int | None) -> None:
    folder = paths().config_dir
    folder.mkdir(parents=True, exist_ok=True)
    extra = f"endpoint:\n  port: {port}\n" if port else ""
    (folder / "config.yaml").write_text("secrets:\n  file_fallback: true\n" + extra)


def test_connect_writes_the_entry_with_a_working_token_and_remove_restores_the_file(
    portico_home: Path, tmp_path: Path
) -> None:
    settings(47800)
    target = tmp_path / "mcp.json"
    original = '{\n  // mine\n  "mcpServers": {"mine": {"url": "http://x"}}, // keep me\n}\n'
    target.write_text(original)
    out = run_cli(portico_home, "connect", "cursor", "--file", str(target))
    assert out.returncode == 0, out.stderr
    text = target.read_text()
    assert "// mine" in text and "// keep me" in text
    entry = json.loads(strip_jsonc(text))["mcpServers"]["portico"]
    assert entry["url"] == "http://127.0.0.1:47800/mcp"
    token = entry["headers"]["Authorization"].removeprefix("Bearer ")
    book = ClientBook(SecretStore(file_fallback=True))
    client = asyncio.run(book.identify(token))
    assert client is not None and client.name == "cursor"

    removed = run_cli(portico_home, "connect", "cursor", "--remove", "--file", str(target))
    assert removed.returncode == 0, removed.stderr
    assert target.read_text() == original
    assert asyncio.run(ClientBook(SecretStore(file_fallback=True)).identify(token)) is None


def test_vscode_gets_a_password_input_and_remove_restores_the_file(
    portico_home: Path, tmp_path: Path
) -> None:
    """VS Code's documented way for a secret: an `inputs` entry with "password": true and
    ${input:ID} in the header (VS Code asks once, keeps it in its secret storage); the
    token is printed once, never written into the file."""
    settings(47800)
    target = tmp_path / "mcp.json"
    target.write_text(VSCODE)
    out = run_cli(portico_home, "connect", "vscode", "--file", str(target))
    assert out.returncode == 0, out.stderr
    text = target.read_text()
    assert "// servers I added by hand" in text and "// keep me" in text
    assert "pgw_" not in text
    data = json.loads(strip_jsonc(text))
    entry = data["servers"]["portico"]
    assert entry["type"] == "http" and entry["url"] == "http://127.0.0.1:47800/mcp"
    assert entry["headers"]["Authorization"] == "Bearer ${input:portico-token}"
    assert data["inputs"] == [
        {
            "type": "promptString",
            "id": "portico-token",
            "description": "Portico endpoint token (printed by `portico connect vscode`)",
            "password": True,
        }
    ]
    token = out.stderr.split("(shown only now):", 1)[1].split()[0]
    client = asyncio.run(ClientBook(SecretStore(file_fallback=True)).identify(token))
    assert client is not None and client.name == "vscode"

    removed = run_cli(portico_home, "connect", "vscode", "--remove", "--file", str(target))
    assert removed.returncode == 0, removed.stderr
    assert target.read_text() == VSCODE
    assert asyncio.run(ClientBook(SecretStore(file_fallback=True)).identify(token)) is None


# A user-level VS Code mcp.json as people keep it: comments of both kinds, trailing
# commas, another server's own password input, tabs.
VSCODE_REAL = """// VS Code MCP servers (user profile)
{
	"inputs": [
		// the GitHub PAT, asked once
		{
			"type": "promptString",
			"id": "github-pat",
			"description": "GitHub Personal Access Token",
			"password": true,
		},
	],
	/* servers */
	"servers": {
		"github": {
			"type": "http",
			"url": "https://api.githubcopilot.com/mcp/",
			"headers": {"Authorization": "Bearer ${input:github-pat}"}, // PAT
		},
	},
}
"""


def test_vscode_connect_twice_keeps_one_input_and_the_other_inputs_and_comments(
    portico_home: Path, tmp_path: Path
) -> None:
    settings(47800)
    target = tmp_path / "mcp.json"
    target.write_text(VSCODE_REAL)
    for _ in range(2):
        out = run_cli(portico_home, "connect", "vscode", "--file", str(target))
        assert out.returncode == 0, out.stderr
    text = target.read_text()
    for kept in ("// VS Code MCP servers", "// the GitHub PAT, asked once", "/* servers */"):
        assert kept in text
    assert '"headers": {"Authorization": "Bearer ${input:github-pat}"}, // PAT' in text
    data = json.loads(strip_jsonc(text))
    assert [i["id"] for i in data["inputs"]] == ["github-pat", "portico-token"]
    assert data["inputs"][1]["password"] is True
    assert data["servers"]["github"]["headers"]["Authorization"] == "Bearer ${input:github-pat}"
    assert data["servers"]["portico"]["headers"]["Authorization"] == (
        "Bearer ${input:portico-token}"
    )
    # --token-env instead: the input goes (nothing refers to it any more)
    env = run_cli(
        portico_home, "connect", "vscode", "--file", str(target), "--token-env", "PORTICO_TOKEN"
    )
    assert env.returncode == 0, env.stderr
    data = json.loads(strip_jsonc(target.read_text()))
    assert [i["id"] for i in data["inputs"]] == ["github-pat"]
    assert data["servers"]["portico"]["headers"]["Authorization"] == "Bearer ${env:PORTICO_TOKEN}"

    removed = run_cli(portico_home, "connect", "vscode", "--remove", "--file", str(target))
    assert removed.returncode == 0, removed.stderr
    assert target.read_text() == VSCODE_REAL
