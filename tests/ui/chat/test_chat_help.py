"""The GUI's /help, its completion hints and its F1 list agree with the one command table
(``portico.chat.commands``) the terminal's /help is made from too."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot

from portico.chat import commands
from tests.ui.chat_helpers import make_active, model_server, models, running_app, write_config
from tests.ui.qt_helpers import until

pytestmark = pytest.mark.slow
__all__ = ["model_server", "models"]


async def test_help_hints_and_f1_come_from_the_command_table(models, qtbot: QtBot) -> None:
    write_config(models, everything=False)
    async with running_app(wait_for_server=False) as desktop:
        chat = desktop.chat
        field = chat.composer.input
        qtbot.keyClicks(field, "/help")
        qtbot.keyClick(field, Qt.Key.Key_Escape)  # the completion popup, not a stop
        chat.composer.send_button.click()

        def notices() -> list[str]:
            return [
                w.text()
                for w in chat.transcript.findChildren(QLabel)
                if w.accessibleName() == "info notice"
            ]

        await until(lambda: commands.help_text("gui") in notices(), 30, "the help")
        assert "/exit" not in commands.help_text("gui")  # the terminal's own, not offered here

        qtbot.keyClicks(field, "/mo")
        popup = chat.composer.input.popup
        await until(
            lambda: popup is not None and any(r.label == "/model" and r.hint for r in popup.rows()),
            30,
            "the completion with its hint",
        )
        assert popup is not None
        row = next(r for r in popup.rows() if r.label == "/model")
        assert row.hint == commands.hint("model")
        field.clear()

        make_active(desktop.window)
        QTest.keyClick(field, Qt.Key.Key_F1)  # what the GUI's /help ends with
        dialog = desktop.window.shortcuts_dialog
        assert dialog is not None and dialog.isVisible()
        rows = dialog.shown_rows()
        assert ("F1", "Keyboard Shortcuts", "Everywhere") in rows
        assert (
            "/",
            "Commands (at the start; /help lists them)",
            "Chats: the message input",
        ) in rows
        dialog.close()
