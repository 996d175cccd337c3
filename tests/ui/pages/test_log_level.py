"""Issue 26, item 8: the Log tab's level control sets the server's level too. Chosen by
keyboard on the real combo box, the level reaches the server: a 2025-11-25 server is sent
``logging/setLevel`` (chatty records what it was asked), a 2026-07-28 one gets the level
on the next call's ``_meta`` (its debug line arrives only once every level is chosen).
It was always ``info`` before."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from portico.ui.app import DesktopApp
from tests.ui.pages_helpers import command, running_app, select, write_global
from tests.ui.qt_helpers import until

pytestmark = pytest.mark.slow  # real servers, processes or the app


async def _call(desktop: DesktopApp, tool: str, **arguments: str) -> str:
    async def on_runtime() -> str:
        conn = desktop.session.hub.connection("chatty")
        result = await conn.call_tool(tool, arguments)
        return " ".join(getattr(part, "text", "") for part in result.content)

    return str(await desktop.runtime.submit(on_runtime()))


def _choose(desktop: DesktopApp, key: Qt.Key) -> None:
    combo = desktop.pages.log.level
    combo.setFocus()
    QTest.keyClick(combo, key)  # what a person does: Up / Down / Home / End on the box


async def test_the_log_level_reaches_a_handshake_era_server() -> None:
    write_global(f'[mcp.chatty]\ncommand = {command("chatty.py")}\nprotocol = "legacy"\n')
    async with running_app("chatty") as desktop:
        select(desktop, "chatty")
        log = desktop.pages.log
        desktop.window.page.setCurrentWidget(log.parentWidget())
        assert await _call(desktop, "levels") == "info"  # what every connect asks for
        _choose(desktop, Qt.Key.Key_End)  # "Errors and above"
        assert log.level.currentData() == "error"
        await until(
            lambda: "asked the server for log messages at error" in log.view.toPlainText(),
            20,
            "the note",
        )
        assert await _call(desktop, "levels") == "info,error"
        _choose(desktop, Qt.Key.Key_Home)  # "All levels"
        await until(lambda: "at debug and above" in log.view.toPlainText(), 20, "the note")
        assert await _call(desktop, "levels") == "info,error,debug"


async def test_the_log_level_rides_on_a_2026_server_s_requests() -> None:
    write_global(f"[mcp.chatty]\ncommand = {command('chatty.py')}\n")
    async with running_app("chatty") as desktop:
        select(desktop, "chatty")
        log = desktop.pages.log
        desktop.window.page.setCurrentWidget(log.parentWidget())
        await _call(desktop, "whisper", text="before")  # debug: below the default info
        _choose(desktop, Qt.Key.Key_Down)  # "Info and above"
        _choose(desktop, Qt.Key.Key_Home)  # "All levels": debug
        await until(
            lambda: "at debug and above with each request" in log.view.toPlainText(), 20, "the note"
        )
        await _call(desktop, "whisper", text="after")
        await until(lambda: "psst after" in log.view.toPlainText(), 20, "the debug line")
        assert "psst before" not in log.view.toPlainText()
