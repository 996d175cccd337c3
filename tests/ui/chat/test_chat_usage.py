"""Tokens from the providers' usage fields in the pane: each answer shows its turn's, the
header the turn's and the chat's, and a chat opened again shows its totals at once."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from tests.servers.model_server import text
from tests.ui.chat_helpers import model_server, models, running_app, write_config
from tests.ui.qt_helpers import until

pytestmark = pytest.mark.slow
__all__ = ["model_server", "models"]


async def test_usage_per_turn_and_per_chat(models, qtbot: QtBot) -> None:
    write_config(models, everything=False)
    models.script(
        text("One.", usage={"input": 1200, "output": 30}),
        text("Two.", usage={"input": 1500, "output": 45}),
    )
    async with running_app(wait_for_server=False) as desktop:
        chat = desktop.chat
        for question, count in (("First?", 2), ("Second?", 4)):
            qtbot.keyClicks(chat.composer.input, question)
            qtbot.keyClick(chat.composer.input, Qt.Key.Key_Return)
            await until(
                lambda c=count: not chat.running and len(chat.transcript.messages) == c, 30, "turn"
            )
        assert chat.pane.usage.text() == "Turn: 1,500 in · 45 out  ·  Chat: 2,700 in · 75 out"
        answers = [chat.transcript.widgets[m.id] for m in chat.transcript.messages[1::2]]
        assert [a.tokens.text() for a in answers] == ["1,200 in · 30 out", "1,500 in · 45 out"]
        first = chat.current.id

        chat.place.conversations.new_button.click()
        await until(lambda: chat.current.id != first, 30, "a new chat")
        assert chat.pane.usage.text() == ""  # nothing asked yet
        chat.place.conversations.selected.emit(first)
        await until(lambda: chat.current.id == first, 30, "the first chat again")
        assert chat.pane.usage.text() == "Chat: 2,700 in · 75 out"
        answers = [chat.transcript.widgets[m.id] for m in chat.transcript.messages[1::2]]
        assert [a.tokens.text() for a in answers] == ["1,200 in · 30 out", "1,500 in · 45 out"]


async def test_cost_from_the_price_table_beside_the_tokens(models, qtbot: QtBot) -> None:
    path = write_config(models, everything=False)
    with path.open("a") as f:
        f.write("\n[models.providers.scripted.prices]\ngpt-test = { input = 10, output = 20 }\n")
    models.script(
        text("One.", usage={"input": 1200, "output": 30}),
        text("Two.", usage={"input": 1500, "output": 45}),
    )
    async with running_app(wait_for_server=False) as desktop:
        chat = desktop.chat
        for question, count in (("First?", 2), ("Second?", 4)):
            qtbot.keyClicks(chat.composer.input, question)
            qtbot.keyClick(chat.composer.input, Qt.Key.Key_Return)
            await until(
                lambda c=count: not chat.running and len(chat.transcript.messages) == c, 30, "turn"
            )
        assert chat.pane.usage.text() == (
            "Turn: 1,500 in · 45 out · $0.0159  ·  Chat: 2,700 in · 75 out · $0.0285"
        )
        answers = [chat.transcript.widgets[m.id] for m in chat.transcript.messages[1::2]]
        assert [a.tokens.text() for a in answers] == [
            "1,200 in · 30 out · $0.0126",
            "1,500 in · 45 out · $0.0159",
        ]
        first = chat.current.id
        chat.place.conversations.new_button.click()
        await until(lambda: chat.current.id != first, 30, "a new chat")
        chat.place.conversations.selected.emit(first)
        await until(lambda: chat.current.id == first, 30, "the first chat again")
        assert chat.pane.usage.text() == "Chat: 2,700 in · 75 out · $0.0285"
