"""``mcp list`` shows a server that failed as Failed, with its error and its retry time."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from portico.cli.main import main
from portico.paths import paths


def test_a_failed_server_is_listed_as_failed_with_its_retry_time(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    toml = paths().global_toml
    toml.parent.mkdir(parents=True, exist_ok=True)
    crash = "import sys; sys.stderr.write('boom\\n'); sys.exit(3)"
    toml.write_text(
        f"[mcp.broken]\ncommand = [{json.dumps(sys.executable)}, \"-c\", {json.dumps(crash)}]\n"
    )
    assert main(["mcp", "list", "--budget", "20"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("broken"))
    assert row.split()[1] == "Failed", out
    assert "Cooldown" not in out
    assert "error: server exited (code 3)" in out
    assert re.search(r"^    retries at \d\d:\d\d:\d\d$", out, re.M), out
