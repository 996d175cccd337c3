"""The whole app in-process against real stdio servers: trust review, live statuses, quit."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from portico.runtime.events import Status
from portico.ui.app import DesktopApp
from portico.ui.dialogs.trust_dialog import TrustDialog
from portico.ui.loop import ensure_application
from portico.ui.tray_state import Aggregate
from tests.helpers.unsandboxed import agreed_for_project
from tests.ui.qt_helpers import gone, until

pytestmark = pytest.mark.slow  # talks to real servers or processes

TINY = Path(__file__).resolve().parent.parent / "servers" / "tiny.py"


def _write_config(project: Path) -> None:
    config = project / ".portico"
    py = sys.executable.replace("\\", "/")
    tiny = str(TINY).replace("\\", "/")
    (config / "mcp.toml").write_text(
        f'[mcp.tiny]\ncommand = ["{py}", "{tiny}", "--tools", "3"]\n\n'
        f'[mcp.broken]\ncommand = ["{py}", "{tiny}", "--exit", "3"]\n',
        encoding="utf-8",
    )


async def test_app_runs_real_servers_and_quits_cleanly(project: Path) -> None:
    _write_config(project)  # project stdio servers: each needs a trust review
    agreed_for_project(project)  # where this machine cannot sandbox, agreed before
    desktop = DesktopApp(ensure_application())
    desktop.window.project = project
    applied: list[str] = []
    desktop.configApplied.connect(applied.append)
    run = asyncio.ensure_future(desktop.run())
    try:
        # Both servers are new: the trust review asks, one dialog at a time, each named.
        first = await until(lambda: desktop.prompter and desktop.prompter.current, 60, "trust")
        assert isinstance(first, TrustDialog)
        asked = {first.server}
        first.once_button.click()
        second = await until(
            lambda: (
                desktop.prompter.current  # type: ignore[union-attr]
                if desktop.prompter.current is not first  # type: ignore[union-attr]
                else None
            ),
            60,
            "the second trust review",
        )
        asked.add(second.server)
        assert asked == {"tiny", "broken"}
        second.once_button.click()

        def row(name: str) -> object:
            state = desktop.model.state(name)
            return state.status if state else None

        await until(lambda: row("tiny") == Status.RUNNING, 60, "tiny to run")
        await until(lambda: row("broken") in (Status.FAILED, Status.COOLDOWN), 60, "broken to fail")
        assert desktop.model.state("tiny").tool_count == 4  # type: ignore[union-attr]
        assert desktop.tray.state is Aggregate.FAILED
        await until(lambda: applied, 60, "the discovery pass")
        assert "1 failed: broken" in applied[0]  # the hub's discovery line
        # the status bar follows the states, with the list's tool count
        assert desktop.window.summary_label.text() == "2 servers: 1 running, 1 failed; 4 tools"
        assert desktop.model.data(desktop.model.index(0), desktop.model.ScopeRole) == "project"
        assert gone(first) and gone(second)
    finally:
        desktop.request_quit()
        assert await asyncio.wait_for(run, 60) == 0
    assert not desktop.runtime.is_running
