"""A provider's failure in the pane: one line on the answer saying what to do, the
question and what arrived kept, and Retry offered (after a 429 it counts the provider's
retry-after down first); clicking it asks again. A local server's refusal (llama-server
without --jinja) says what fixes it."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from tests.servers.model_server import error, text
from tests.ui.chat_helpers import model_server, models, running_app, write_config
from tests.ui.qt_helpers import until

pytestmark = pytest.mark.slow

__all__ = ["model_server", "models"]


async def test_failed_answers_offer_retry(models, qtbot: QtBot) -> None:
    write_config(models, everything=False)
    models.script(
        text("Paris is the capital of", truncate_after=3),
        text("Paris."),
        error(429, retry_after=2),
        text("Lyon."),
        error(401),
        text("Marseille."),
        {"local_refusal": "llamacpp_no_jinja"},
        text("Toulouse."),
    )
    async with running_app(wait_for_server=False) as desktop:
        chat = desktop.chat

        def answer():  # type: ignore[no-untyped-def]
            """The last answer's widget (None before it is on screen)."""
            messages = chat.transcript.messages
            widget = chat.transcript.widgets.get(messages[-1].id) if messages else None
            return widget if widget is not None and widget.role == "assistant" else None

        def failed() -> bool:
            widget = answer()
            return not chat.running and widget is not None and widget.status.isVisible()

        def says(words: str) -> bool:
            widget = answer()
            return not chat.running and widget is not None and widget.plain_text() == words

        qtbot.keyClicks(chat.composer.input, "Capital of France?")
        qtbot.keyClick(chat.composer.input, Qt.Key.Key_Return)
        await until(failed, 30, "failure")
        shown = answer()
        assert shown.status.text().startswith("This answer failed: The answer from")
        assert "stopped before its end" in shown.status.text()
        assert "Retry to ask again" in shown.status.text()
        assert shown.plain_text() == "Paris is the"  # what arrived stays on screen
        assert shown.retry_button.isVisible() and shown.retry_button.isEnabled()
        shown.retry_button.click()
        await until(lambda: says("Paris."), 30, "retry")
        assert not answer().status.isVisible()
        shown_texts = [chat.transcript.widgets[m.id].plain_text() for m in chat.transcript.messages]
        assert shown_texts == ["Capital of France?", "Paris."]  # the failed answer replaced

        qtbot.keyClicks(chat.composer.input, "And the second city?")
        qtbot.keyClick(chat.composer.input, Qt.Key.Key_Return)
        await until(failed, 30, "the 429")
        shown = answer()
        assert "is rate limited (HTTP 429" in shown.status.text()
        assert "Try again in 2 s." in shown.status.text()
        button = shown.retry_button
        assert button.isVisible() and not button.isEnabled()
        assert button.text() in ("Retry in 2 s", "Retry in 1 s")
        await until(lambda: button.isEnabled(), 10, "the retry-after to pass")
        assert button.text() == "Retry"
        button.click()
        await until(lambda: says("Lyon."), 30, "retry")

        qtbot.keyClicks(chat.composer.input, "And the third?")
        qtbot.keyClick(chat.composer.input, Qt.Key.Key_Return)
        await until(failed, 30, "the 401")
        shown = answer()
        assert "refused the API key (HTTP 401" in shown.status.text()
        assert "portico secret set" in shown.status.text()
        assert shown.retry_button.isVisible()  # once the key is fixed, Retry asks again
        shown.retry_button.click()
        await until(lambda: says("Marseille."), 30, "retry")
        assert len(chat.transcript.messages) == 6

        # a local server's refusal that a retry alone never fixes says what does
        qtbot.keyClicks(chat.composer.input, "And the fourth?")
        qtbot.keyClick(chat.composer.input, Qt.Key.Key_Return)
        await until(failed, 30, "the llama-server refusal")
        shown = answer()
        assert "does not take tool calls (HTTP 500" in shown.status.text()
        assert "Restart llama-server with --jinja" in shown.status.text()
        assert "Retry in a moment" not in shown.status.text()
        assert shown.retry_button.isVisible()  # once the server is restarted
        shown.retry_button.click()
        await until(lambda: says("Toulouse."), 30, "retry")
        assert len(chat.transcript.messages) == 8
