"""An imported server really starts: Claude Desktop config -> mcp import -> load -> run.

Uses the npm reference server (server-everything) over stdio, through the runtime's
Connection, so a conversion that loads but does not run would fail here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from portico.cli.main import main
from portico.config import load
from portico.runtime.connection import Connection
from portico.runtime.events import EventBus, Status

REPO = Path(__file__).resolve().parents[2]
PEERS = REPO / "tests" / "peers" / "node_modules"
EVERYTHING = PEERS / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
NODE = PEERS / ".bin" / "node"

pytestmark = [
    pytest.mark.npm,
    pytest.mark.skipif(not EVERYTHING.exists(), reason="npm peers not installed"),
    pytest.mark.slow,
]


async def test_imported_stdio_server_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "claude_desktop_config.json"
    node = str(NODE) if NODE.exists() else "node"
    source.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "everything.local": {
                        "command": node,
                        "args": [str(EVERYTHING), "stdio"],
                        "env": {"EVERYTHING_MODE": "test"},
                    }
                }
            }
        )
    )
    assert main(["mcp", "import", "claude-desktop", "--from", str(source)]) == 0
    assert "  + everything-local -> " in capsys.readouterr().out

    spec = load().server("everything-local")
    assert spec is not None
    connection = Connection(spec, bus=EventBus())
    await connection.start()
    try:
        state = await connection.wait_settled(60)
        assert state.status is Status.RUNNING, state.error
        assert "echo" in {tool.name for tool in connection.tools}
        result = await connection.call_tool("echo", {"message": "imported"})
        assert "imported" in result.content[0].text
    finally:
        await connection.stop()
