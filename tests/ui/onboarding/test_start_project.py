"""The app opens the project it is started for (issue 26, item 15): ``--project DIR`` or
the folder it is started in wins over the project the window showed last."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from portico.ui.app import DesktopApp
from portico.ui.dialogs.trust_dialog import TrustDialog
from portico.ui.loop import ensure_application
from portico.ui.main_window import settings
from tests.ui.qt_helpers import until

pytestmark = pytest.mark.slow  # the whole app with a real stdio server

TINY = Path(__file__).resolve().parents[2] / "servers" / "tiny.py"


async def test_the_start_project_wins_over_the_last_one(project: Path, tmp_path: Path) -> None:
    py = sys.executable.replace("\\", "/")
    tiny = str(TINY).replace("\\", "/")
    (project / ".portico" / "mcp.toml").write_text(
        f'[mcp.here]\ncommand = ["{py}", "{tiny}", "--tools", "1"]\n', encoding="utf-8"
    )
    last = tmp_path / "last-project"
    (last / ".portico").mkdir(parents=True)
    store = settings()
    store.setValue("project/last", str(last))  # what the window showed the last time
    store.sync()
    desktop = DesktopApp(ensure_application(), project=project)
    run = asyncio.ensure_future(desktop.run())
    try:
        # The started-in project's server is the one reviewed: its config was loaded.
        dialog = await until(lambda: desktop.prompter and desktop.prompter.current, 60, "trust")
        assert isinstance(dialog, TrustDialog) and dialog.server == "here"
        assert desktop.window.project == project
        assert desktop.window.windowTitle() == "Portico — project"
        dialog.once_button.click()
        await until(lambda: desktop.model.state("here"), 60, "the project's server listed")
    finally:
        desktop.request_quit()
        assert await asyncio.wait_for(run, 60) == 0
