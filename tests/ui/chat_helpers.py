"""The real app with a real chat: server-everything and the scripted model server, written
into the config the way the first run writes them."""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication, QWidget

from portico.config.document import ConfigDocument
from portico.paths import paths
from portico.ui.app import DesktopApp
from portico.ui.loop import ensure_application
from portico.ui.onboarding.setup import add_provider
from tests.helpers.model_server import model_server, models
from tests.helpers.servers import EVERYTHING, NODE
from tests.servers.model_server import ModelServer
from tests.ui.qt_helpers import until

needs_npm = pytest.mark.skipif(not EVERYTHING.exists(), reason="npm peers not installed")

__all__ = ["ModelServer", "model_server", "models"]


def write_config(
    server: ModelServer | None, *, everything: bool = True, **everything_keys: object
) -> Path:
    """``everything_keys``: more keys of the everything server (tool_costs, spend_limit…)."""
    path = paths().global_toml
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = ConfigDocument.open(path)
    if everything:
        doc.add_server(
            "everything",
            {
                "command": str(NODE),
                "args": [str(EVERYTHING), "stdio"],
                "protocol": "legacy",
                "connect_timeout": 30,
                **everything_keys,
            },
        )
    doc.save()
    if server is not None:
        add_provider(
            "scripted",
            kind="openai",
            base_url=server.openai_url,
            key_ref=None,
            models=["gpt-test", "vision-test"],
            default_model="gpt-test",
            path=path,
        )
    return path


def make_active(window: QWidget) -> None:
    """Offscreen, a shown window does not become the active one by itself, and keyboard
    shortcuts (Ctrl+1, Ctrl+N, …) only reach the active window."""
    window.activateWindow()
    if QApplication.activeWindow() is not window:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            QApplication.setActiveWindow(window)


@asynccontextmanager
async def running_app(wait_for_server: bool = True) -> AsyncIterator[DesktopApp]:
    from portico.runtime.events import Status

    desktop = DesktopApp(ensure_application())
    run = asyncio.ensure_future(desktop.run())
    try:
        await until(lambda: desktop.chat.current is not None, 60, "a chat to open")
        make_active(desktop.window)
        desktop.window.chats.focus_input()
        if wait_for_server:

            def running() -> bool:
                state = desktop.model.state("everything")
                return state is not None and state.status is Status.RUNNING

            await until(running, 60, "server-everything to run")
        yield desktop
    finally:
        desktop.request_quit()
        assert await asyncio.wait_for(run, 60) == 0


@pytest.fixture
def memory_keyring() -> Iterator[object]:
    """A secure in-memory keyring for the test (never the machine's own)."""
    import keyring

    from tests.helpers.keyrings import MemoryKeyring

    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)
