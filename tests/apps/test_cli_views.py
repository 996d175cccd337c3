"""``portico mcp tools`` and ``mcp call`` on a server with MCP Apps views (real processes)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from portico.paths import paths
from tests.cli.test_cli_runtime import run

pytestmark = pytest.mark.slow  # real processes

VIEWER = Path(__file__).parents[1] / "servers" / "viewer.py"


@pytest.fixture
def viewer_config(portico_home: Path) -> Path:
    toml = paths().global_toml
    toml.parent.mkdir(parents=True, exist_ok=True)
    command = json.dumps([sys.executable, str(VIEWER)])
    toml.write_text(f'[mcp.viewer]\ncommand = {command}\ntrust = "full"\n')
    return toml


def test_the_cli_says_who_a_tool_is_for_and_where_its_view_is(
    viewer_config: Path, tmp_path: Path
) -> None:
    listed = run("mcp", "tools", "viewer", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    lines = {line.split()[0]: line for line in listed.stdout.splitlines()}
    assert "[view, for views only]" in lines["viewer__refresh"]
    assert "[for models only]" in lines["viewer__forecast"]
    assert "[view]" in lines["viewer__show_weather"] and "[" not in lines["viewer__plain"]
    data = json.loads(run("mcp", "tools", "viewer", "--json", cwd=tmp_path).stdout)
    rows = {t["tool"]: t for t in data["tools"]}
    assert rows["refresh"]["view"] == "ui://viewer/weather" and not rows["refresh"]["for_model"]

    call = run("mcp", "call", "viewer", "show_weather", "--args", '{"city": "Oslo"}', cwd=tmp_path)
    assert call.returncode == 0, call.stderr
    assert "Oslo" in call.stdout
    assert "comes with an interactive view (ui://viewer/weather)" in call.stderr
    # ... and how to open it in the app
    assert "open the Portico app: Servers > viewer > Tools > show_weather > Try it" in call.stderr
    assert "have a chat call viewer__show_weather" in call.stderr
    qualified = run(
        "mcp", "call", "viewer", "viewer__show_weather", "--args", '{"city": "Rome"}', cwd=tmp_path
    )
    assert qualified.returncode == 0, qualified.stderr
    assert "Tools > show_weather > Try it" in qualified.stderr
    plain = run("mcp", "call", "viewer", "plain", cwd=tmp_path)
    assert plain.returncode == 0 and "view" not in plain.stderr
