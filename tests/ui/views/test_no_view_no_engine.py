"""A person who never sees a view pays nothing for the web engine: with a server that has
views connected and its Tools page open (Try it's view pane built), no QtWebEngine module
is imported and no engine process runs (the app in a process of its own)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.ui.pages_helpers import write_global

pytestmark = pytest.mark.slow  # the app and a real server, in a subprocess

DRIVER = Path(__file__).with_name("no_view_driver.py")
VIEWER = Path(__file__).parents[2] / "servers" / "viewer.py"


def test_no_view_shown_no_web_engine_loaded(portico_home: Path) -> None:
    command = json.dumps([sys.executable, str(VIEWER)])
    write_global(f"[mcp.viewer]\ncommand = {command}\ntrust = 'full'\n")
    env = {**os.environ, "PORTICO_HOME": str(portico_home), "QT_QPA_PLATFORM": "offscreen"}
    proc = subprocess.run(
        [sys.executable, str(DRIVER)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    [facts] = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert facts["tools"] == ["show_weather", "refresh"] and facts["pane"]
    assert facts == {**facts, "engine_modules": [], "views_engine": False, "engine_processes": 0}
