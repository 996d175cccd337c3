"""Direct mode, with no model configured: a prompt slash command, /call and an @ resource
work from the chat, each picked from the completion popup with the keyboard."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from tests.ui.chat_helpers import needs_npm, running_app, write_config
from tests.ui.qt_helpers import until

pytestmark = [needs_npm, pytest.mark.slow]


async def test_prompt_call_and_resource_without_a_model(qtbot: QtBot) -> None:
    write_config(None)  # server-everything, no model
    async with running_app() as desktop:
        chat = desktop.chat
        composer = chat.composer
        field = composer.input
        assert composer.model_picker.currentText() == "No model (direct mode)"

        # A prompt: "/simple" completes to the server's prompt from the core's list.
        qtbot.keyClicks(field, "/everything:simple")
        await until(lambda: composer.popup.isVisible() and composer.popup.rows(), 20, "popup")
        assert composer.popup.rows()[0].label == "/everything:simple-prompt"
        qtbot.keyClick(field, Qt.Key.Key_Return)  # picks the completion
        assert field.toPlainText() == "/everything:simple-prompt "
        qtbot.keyClick(field, Qt.Key.Key_Return)  # sends
        await until(
            lambda: any(
                "This is a simple prompt without arguments." in w.plain_text()
                for w in chat.transcript.widgets.values()
            ),
            30,
            "the rendered prompt",
        )
        await until(lambda: not chat.running, 20, "the command to end")

        # /call: the tool name completes after "/call ".
        qtbot.keyClicks(field, "/call everything__ec")
        await until(lambda: composer.popup.isVisible() and composer.popup.rows(), 20, "tools")
        assert composer.popup.rows()[0].label == "everything__echo"
        qtbot.keyClick(field, Qt.Key.Key_Tab)
        qtbot.keyClicks(field, '{"message": "hello direct"}')
        qtbot.keyClick(field, Qt.Key.Key_Return)
        card = await until(lambda: next(iter(chat.cards.values()), None), 30, "the call's card")
        await until(lambda: card.state.outcome == "ok", 30, "the echo")
        assert card.result_text is not None and "hello direct" in card.result_text.text()
        await until(lambda: not chat.running, 20, "the call to end")

        # @ a resource: the URIs come from the server, fetched when the popup opens.
        qtbot.keyClicks(field, "read @everything:demo://resource/static/document/")
        await until(lambda: composer.popup.isVisible() and composer.popup.rows(), 20, "resources")
        first = composer.popup.rows()[0].label
        assert first.startswith("@everything:demo://resource/static/document/")
        qtbot.keyClick(field, Qt.Key.Key_Return)
        qtbot.keyClick(field, Qt.Key.Key_Return)
        name = first.rsplit("/", 1)[-1]

        def attached() -> bool:
            return any(
                name in w.plain_text() or any(name in a.name for a in w.message.attachments)
                for w in chat.transcript.widgets.values()
                if w.role == "user"
            )

        await until(attached, 30, "the resource attached to the message")
        await until(lambda: not chat.running, 20, "the message to end")
        failed = [w for w in chat.transcript.widgets.values() if w.status.isVisible()]
        assert failed == []  # nothing said "failed": direct mode did what was asked
