"""Error wording at the command line: said once, and no library traceback on stderr."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from portico.paths import paths
from tests.helpers.servers import start_toolbox, stop_server

pytestmark = pytest.mark.slow  # talks to real servers or processes

REPO = Path(__file__).resolve().parents[2]
TOOLBOX = REPO / "tests" / "servers" / "toolbox.py"


@pytest.fixture
def sse_url() -> Iterator[str]:
    server = start_toolbox("sse")
    yield server.url
    stop_server(server)


def test_sse_event_over_1_mib_is_one_clear_line(
    portico_home: Path, sse_url: str, tmp_path: Path
) -> None:
    toml = paths().global_toml
    toml.parent.mkdir(parents=True, exist_ok=True)
    toml.write_text(f'[mcp.old]\nurl = "{sse_url}"\ntransport = "sse"\n')
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "portico.cli.main",
            "mcp",
            "call",
            "old",
            "big",
            "--args",
            '{"mib": 2}',
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={**os.environ},
    )
    assert out.returncode == 1
    assert "Traceback" not in out.stderr and "Encountered SSE exception" not in out.stderr
    error = [line for line in out.stderr.splitlines() if "big" in line]
    assert len(error) == 1, out.stderr
    line = error[0]
    assert line.count("old:") == 1 and line.count("big") == 1 and line.count("1 MiB") == 1
    assert "old: calling 'big' failed:" in line and "transport: http" in line
