"""Run ``portico`` as a person does: its own process, its own PORTICO_HOME."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.helpers.warm import python_command


def run_cli(home: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """``python -m portico.cli.main ARGS``: through the session's fork server when it runs
    (the imports done once; tests/helpers/warm.py), a process of its own either way."""
    env = {**os.environ, "PORTICO_HOME": str(home)}
    return subprocess.run(
        python_command("-m", "portico.cli.main", *args),
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=90,
        check=False,
    )
