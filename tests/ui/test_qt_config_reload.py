"""Outside edits of a config file reach the running app; a broken file keeps its servers."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from portico.paths import paths
from portico.runtime.events import Status
from portico.ui.app import DesktopApp
from portico.ui.loop import ensure_application
from tests.helpers.logs import AllowLogs
from tests.ui.qt_helpers import until

pytestmark = pytest.mark.slow  # talks to real servers or processes

TINY = Path(__file__).resolve().parent.parent / "servers" / "tiny.py"


def _server(name: str, tools: int) -> str:
    py = sys.executable.replace("\\", "/")
    tiny = str(TINY).replace("\\", "/")
    return f'[mcp.{name}]\ncommand = ["{py}", "{tiny}", "--tools", "{tools}"]\n\n'


async def test_outside_edits_apply_and_a_broken_file_keeps_its_servers(
    allow_logs: AllowLogs,
) -> None:
    allow_logs(r"mcp\.toml:\d+:\d+: not valid TOML")
    config = paths().global_toml
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("# my servers\n" + _server("alpha", 2), encoding="utf-8")
    desktop = DesktopApp(ensure_application())
    applied: list[str] = []
    desktop.configApplied.connect(applied.append)
    run = asyncio.ensure_future(desktop.run())

    def status(name: str) -> object:
        state = desktop.model.state(name)
        return state.status if state else None

    try:
        await until(lambda: status("alpha") == Status.RUNNING, 60, "alpha to run")
        passes = len(applied)

        # Another program (an editor, `portico mcp add`) adds a server.
        config.write_text(config.read_text() + _server("beta", 1), encoding="utf-8")
        await until(lambda: status("beta") == Status.RUNNING, 60, "beta to run after the edit")
        # The pass that started beta ends with its summary, a moment after beta's status.
        await until(lambda: len(applied) > passes, 60, "the reload's discovery pass")
        assert status("alpha") == Status.RUNNING

        # A half-typed edit: the file no longer parses. Nothing that ran stops.
        config.write_text(config.read_text() + "[mcp.gamma\ncommand = [", encoding="utf-8")

        def parse_error() -> str | None:
            texts = [row.notice.text for row in desktop.window.notices.rows()]
            return next((t for t in texts if t.startswith(f"{config}:")), None)

        error = await until(parse_error, 60, "the parse error of the broken file")
        assert error.startswith(f"{config}:8:11: not valid TOML"), error  # [mcp.gamma
        assert "keep their previous settings" in error
        assert (status("alpha"), status("beta")) == (Status.RUNNING, Status.RUNNING)
    finally:
        desktop.request_quit()
        assert await asyncio.wait_for(run, 60) == 0
