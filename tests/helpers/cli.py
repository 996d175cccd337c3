"""Run ``portico`` as a person does: its own process, its own PORTICO_HOME."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def run_cli(home: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PORTICO_HOME": str(home)}
    return subprocess.run(
        [sys.executable, "-m", "portico.cli.main", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=90,
        check=False,
    )
