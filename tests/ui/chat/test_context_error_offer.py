"""A provider's own context-length error in the app: the failed answer keeps its
question and offers "Summarise and retry" and "Trim and retry"; Trim leaves the older
messages out, which a line above the first message still sent says, and the turn is
answered."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from tests.servers.model_server import text
from tests.ui.chat_helpers import model_server, models, running_app, write_config
from tests.ui.qt_helpers import until

__all__ = ["model_server", "models"]


@pytest.mark.slow
async def test_the_servers_context_error_offers_summarise_and_trim(models, qtbot: QtBot) -> None:
    write_config(models, everything=False)  # no context length known before the error
    models.script(
        text("Noted."),
        {"context_too_long": {"tokens": 9_000, "limit": 8_000}},
        text("Answered."),
    )
    async with running_app(wait_for_server=False) as desktop:
        chat = desktop.chat
        for question, count in (("alpha " * 3334, 2), ("bravo " * 1000, 4)):
            chat.composer.input.insertPlainText(question)
            qtbot.keyClick(chat.composer.input, Qt.Key.Key_Return)
            await until(
                lambda c=count: not chat.running and len(chat.transcript.messages) == c, 60, "turn"
            )
        failed = chat.transcript.widgets[chat.transcript.messages[-1].id]
        assert "The conversation is too long" in failed.status.text()
        assert failed.compact_buttons is not None
        summarise, trim = failed.compact_buttons
        assert (summarise.text(), trim.text()) == ("Summarise and retry", "Trim and retry")
        assert summarise.isVisible() and trim.isVisible()
        assert chat.transcript.messages[-2].text.startswith("bravo")  # the question is kept
        qtbot.mouseClick(trim, Qt.MouseButton.LeftButton)
        await until(lambda: len(models.requests) == 3 and not chat.running, 60, "the retry")
        await until(lambda: chat.transcript.messages[-1].text == "Answered.", 30, "the answer")
        # the question the model still gets says what went before it, and how
        kept = chat.transcript.widgets[chat.transcript.messages[-2].id]
        await until(lambda: kept.cut_note is not None and kept.cut_note.isVisible(), 10, "line")
        assert kept.cut_note.text() == (
            "— 2 messages above are not sent to the model (/compact trim). "
            "They stay in this chat. —"
        )
    sent = models.requests[2].body["messages"]
    assert [m["role"] for m in sent] == ["system", "user"]
    assert sent[1]["content"].startswith("bravo")
