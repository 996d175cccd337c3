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
    target.write_text(VSCODE)
    out = run_cli(portico_home, "connect", "vscode", "--file", str(target))
    assert out.returncode == 0, out.stderr
    text = target.read_text()
    assert "// servers I added by hand" in text and "// keep me" in text
    entry = json.loads(strip_jsonc(text))["servers"]["portico"]
    assert entry["type"] == "http" and entry["url"] == "http://127.0.0.1:47800/mcp"
    token = entry["headers"]["Authorization"].removeprefix("Bearer ")
    book = ClientBook(SecretStore(file_fallback=True))
    client = asyncio.run(book.identify(token))
    assert client is not None and client.name == "vscode"

    removed = run_cli(portico_home, "connect", "vscode", "--remove", "--file", str(target))
    assert removed.returncode == 0, removed.stderr
    assert target.read_text() == VSCODE
    assert asyncio.run(ClientBook(SecretStore(file_fallback=True)).identify(token)) is None


def test_connect_needs_a_fixed_port_and_says_how(portico_home: Path, tmp_path: Path) -> None:
    settings(None)
    target = tmp_path / "mcp.json"
    out = run_cli(portico_home, "connect", "cursor", "--file", str(target))
    assert out.returncode == 2
    assert "endpoint: {port: 47800}" in out.stderr
    assert not target.exists()


def test_with_token_env_the_file_holds_a_reference_and_the_token_is_printed(
    portico_home: Path, tmp_path: Path
) -> None:
    settings(47800)
    target = tmp_path / ".claude.json"
    target.write_text('{"mcpServers": {}}\n')
    out = run_cli(
        portico_home,
        "connect",
        "claude-code",
        "--file",
        str(target),
        "--token-env",
        "PORTICO_TOKEN",
    )
    assert out.returncode == 0, out.stderr
    entry = json.loads(target.read_text())["mcpServers"]["portico"]
    assert entry["headers"]["Authorization"] == "Bearer ${PORTICO_TOKEN}"
    assert "pgw_" not in target.read_text()
    token = out.stderr.split("export PORTICO_TOKEN=", 1)[1].split()[0]
    client = asyncio.run(ClientBook(SecretStore(file_fallback=True)).identify(token))
    assert client is not None and client.name == "claude-code"
