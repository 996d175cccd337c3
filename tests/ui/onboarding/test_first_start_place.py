"""The first start opens a chat in the Chats place, but never moves a person who went to
Servers while the app was starting: not the place, not the keyboard focus."""

from __future__ import annotations

import asyncio

import pytest
from PySide6.QtWidgets import QApplication

from portico.runtime.events import Status
from portico.ui.app import DesktopApp
from portico.ui.loop import ensure_application
from tests.ui.chat_helpers import make_active
from tests.ui.pages_helpers import command, status_of, write_global
from tests.ui.qt_helpers import until

pytestmark = pytest.mark.slow  # starts the app with a real server

CONFIG = f"[mcp.tiny]\ncommand = {command('tiny.py')}\n"


async def test_a_chat_that_opens_late_leaves_the_person_in_servers() -> None:
    write_global(CONFIG)
    desktop = DesktopApp(ensure_application())
    run = asyncio.ensure_future(desktop.run())
    window = desktop.window
    opened: list[str] = []
    desktop.chat.opened.connect(opened.append)  # the opening's last step, focus_input's own
    try:
        await until(lambda: window.painted, 30, "the window to paint")
        assert desktop.chat.current is None  # the chat is not open yet
        make_active(window)
        window.show_servers()  # the person goes to Servers while the app starts
        assert QApplication.focusWidget() is window.server_list
        await until(lambda: opened, 60, "the chat to open")
        assert window.place == "Servers"
        assert QApplication.focusWidget() is window.server_list
        await until(lambda: status_of(desktop, "tiny") is Status.RUNNING, 60, "tiny runs")
        window.show_chats()  # going back finds the chat with the focus in its input
        assert QApplication.focusWidget() is desktop.chat.composer.input
    finally:
        desktop.request_quit()
        assert await asyncio.wait_for(run, 60) == 0
