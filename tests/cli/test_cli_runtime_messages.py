"""Runtime messages at the command line: a failed server in ``mcp list``, warnings of
``mcp tools`` said once."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from portico.cli.main import main
from portico.paths import paths
from tests.helpers.warm import python_command

pytestmark = pytest.mark.slow  # real servers, processes or the app


def test_a_failed_server_is_listed_as_failed_with_its_retry_time(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    toml = paths().global_toml
    toml.parent.mkdir(parents=True, exist_ok=True)
    crash = "import sys; sys.stderr.write('boom\\n'); sys.exit(3)"
    toml.write_text(
        f'[mcp.broken]\ncommand = [{json.dumps(sys.executable)}, "-c", {json.dumps(crash)}]\n'
    )
    assert main(["mcp", "list", "--budget", "20"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("broken"))
    assert row.split()[1] == "Failed", out
    assert "Cooldown" not in out
    assert "error: server exited (code 3)" in out
    assert re.search(r"^    retries at \d\d:\d\d:\d\d$", out, re.M), out


TOOLBOX = Path(__file__).resolve().parents[2] / "tests" / "servers" / "toolbox.py"


def test_mcp_tools_prints_each_warning_once(portico_home: Path, tmp_path: Path) -> None:
    toml = paths().global_toml
    toml.parent.mkdir(parents=True, exist_ok=True)
    toml.write_text(
        f"[mcp.box]\ncommand = [{json.dumps(sys.executable)}, {json.dumps(str(TOOLBOX))}, "
        '"stdio"]\ntools = { include = ["echo", "ecko"] }\n'
    )
    done = subprocess.run(
        python_command("-m", "portico.cli.main", "mcp", "tools", "box"),
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={**os.environ, "PORTICO_HOME": str(portico_home)},
    )
    assert done.returncode == 0, done.stderr
    assert "box__echo" in done.stdout
    warning = "tools.include entry 'ecko' matches no tool"
    assert done.stderr.count(warning) == 1, done.stderr
    assert warning in (paths().log_dir / "cli.log").read_text()  # and kept in the log
