"""A provider's own context-length error in the app: the failed answer keeps its
question and offers "Summarise and retry" and "Trim and retry"; Trim leaves the older
messages out, which a line above the first message still sent says, and the turn is
answered."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QPushButton, QWidget
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


@pytest.mark.slow
async def test_a_summary_that_would_drop_the_oldest_asks_first(models, qtbot: QtBot) -> None:
    write_config(models, everything=False)
    models.script(
        text("Noted."),
        text("Noted again."),
        {"context_too_long": {"tokens": 10_200, "limit": 8_000}},
        text("SUMMARY: bravo words."),
        text("Answered."),
    )
    async with running_app(wait_for_server=False) as desktop:
        chat = desktop.chat
        questions = (("alpha " * 3334, 2), ("bravo " * 3334, 4), ("What now?", 6))
        for question, count in questions:
            chat.composer.input.insertPlainText(question)
            qtbot.keyClick(chat.composer.input, Qt.Key.Key_Return)
            await until(
                lambda c=count: not chat.running and len(chat.transcript.messages) == c, 60, "turn"
            )
        failed = chat.transcript.widgets[chat.transcript.messages[-1].id]
        assert failed.compact_buttons is not None
        qtbot.mouseClick(failed.compact_buttons[0], Qt.MouseButton.LeftButton)  # Summarise
        row = await until(
            lambda: next(
                (
                    w
                    for w in chat.transcript.findChildren(QWidget, "")
                    if w.accessibleName() == "compact choice"
                ),
                None,
            ),
            30,
            "the choice",
        )
        assert "the oldest 2 messages of the 4 to leave out are too long" in " ".join(
            label.text() for label in row.findChildren(QLabel)
        )
        assert len(models.requests) == 3  # nothing was summarised without the person's say
        buttons = {b.text(): b for b in row.findChildren(QPushButton)}
        assert set(buttons) == {"Summarise the newest 2", "Trim all"}
        qtbot.mouseClick(buttons["Summarise the newest 2"], Qt.MouseButton.LeftButton)
        await until(lambda: chat.transcript.messages[-1].text == "Answered.", 60, "the answer")
        kept = chat.transcript.widgets[chat.transcript.messages[-2].id]
        await until(lambda: kept.cut_note is not None and kept.cut_note.isVisible(), 10, "line")
        assert "the oldest 2 were too long to summarise and are not sent at all" in (
            kept.cut_note.text()
        )
    summary = str(models.requests[3].body["messages"])
    assert "bravo bravo" in summary and "alpha alpha" not in summary
