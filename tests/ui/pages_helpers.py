"""Start the real desktop app in-process on a global config of real stdio test servers."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator
from pathlib import Path

from portico.paths import paths
from portico.runtime.events import Status
from portico.ui.app import DesktopApp
from portico.ui.loop import ensure_application
from tests.helpers.unsandboxed import agreed_for_project
from tests.ui.qt_helpers import until

SERVERS = Path(__file__).resolve().parent.parent / "servers"
PY = sys.executable.replace("\\", "/")


def command(script: str, *args: str) -> str:
    parts = [PY, str(SERVERS / script).replace("\\", "/"), *args]
    return "[" + ", ".join(f'"{p}"' for p in parts) + "]"


SHOWCASE = f"""# servers for the page tests
[mcp.showcase]
command = {command("showcase.py")}

  [mcp.showcase.tools]
  exclude = ["secret"]
"""


def write_global(text: str) -> Path:
    path = paths().global_toml
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def status_of(desktop: DesktopApp, name: str) -> Status | None:
    state = desktop.model.state(name)
    return state.status if state else None


@contextlib.asynccontextmanager
async def running_app(*running: str, project: Path | None = None) -> AsyncIterator[DesktopApp]:
    """The app with the config written before; waits until ``running`` all run. Where
    this machine cannot sandbox, the person agreed before to run the project's servers
    unsandboxed."""
    if project is not None:
        agreed_for_project(project)
    desktop = DesktopApp(ensure_application())
    desktop.window.project = project
    run = asyncio.ensure_future(desktop.run())
    await until(lambda: desktop.prompter is not None, 30, "the app to run")  # quit works now
    try:
        for name in running:
            await until(lambda n=name: status_of(desktop, n) is Status.RUNNING, 60, f"{name} runs")
        yield desktop
    finally:
        desktop.request_quit()
        assert await asyncio.wait_for(run, 60) == 0


def select(desktop: DesktopApp, name: str) -> None:
    row = desktop.model.row_of(name)
    assert row is not None, f"{name} is not in the server list"
    desktop.window.show_servers()  # a person picks a server in the Servers place
    desktop.window.server_list.setCurrentIndex(desktop.model.index(row))
