"""The chat settings panel: a person opens it from the pane's header, types a system
prompt and a temperature, saves, and the next request carries them; a bad value is told
in the panel and nothing is sent differently."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from tests.servers.model_server import text
from tests.ui.chat_helpers import model_server, models, running_app, write_config
from tests.ui.qt_helpers import until

pytestmark = pytest.mark.slow
__all__ = ["model_server", "models"]


async def test_saved_settings_reach_the_next_request_and_a_bad_one_is_told(
    models, qtbot: QtBot
) -> None:
    write_config(models, everything=False)
    models.script(text("Bonjour."))
    async with running_app(wait_for_server=False) as desktop:
        chat, pane = desktop.chat, desktop.chat.pane
        panel = pane.settings
        await until(lambda: chat.current is not None, 30, "a chat")
        assert not panel.isVisible()
        qtbot.mouseClick(pane.settings_button, Qt.MouseButton.LeftButton)
        assert panel.isVisible()
        assert "reasoning effort, not a budget" in panel.applies.text()
        assert not panel.thinking_budget.isEnabled()
        panel.temperature.setText("7")
        qtbot.mouseClick(panel.save_button, Qt.MouseButton.LeftButton)
        await until(lambda: panel.error.isVisible(), 30, "the refusal")
        assert panel.error.text() == "temperature: must be between 0 and 2, not 7.0"
        panel.system_prompt.setPlainText("Answer in French.")
        panel.temperature.setText("0.4")
        panel.reasoning_effort.setCurrentIndex(panel.reasoning_effort.findText("medium"))
        qtbot.mouseClick(panel.save_button, Qt.MouseButton.LeftButton)
        await until(lambda: chat.current.settings.temperature == 0.4, 30, "saved")
        assert not panel.error.isVisible()
        assert panel.temperature.text() == "0.4"
        chat.composer.input.insertPlainText("Hello")
        qtbot.keyClick(chat.composer.input, Qt.Key.Key_Return)
        await until(lambda: not chat.running and len(chat.transcript.messages) == 2, 60, "turn")
    body = models.requests[0].body
    assert body["temperature"] == 0.4 and body["reasoning_effort"] == "medium"
    assert body["messages"][0]["content"].endswith("\n\nAnswer in French.")


async def test_switching_the_model_mid_chat_marks_the_answer_and_stays_marked(
    models, qtbot: QtBot
) -> None:
    write_config(models, everything=False)
    models.script(text("One."), text("Two."))
    async with running_app(wait_for_server=False) as desktop:
        chat = desktop.chat
        await until(lambda: chat.current is not None, 30, "a chat")
        picker = chat.composer.model_picker

        async def ask(question: str, count: int) -> None:
            chat.composer.input.insertPlainText(question)
            qtbot.keyClick(chat.composer.input, Qt.Key.Key_Return)
            await until(
                lambda: not chat.running and len(chat.transcript.messages) == count, 60, "turn"
            )

        await ask("first", 2)
        picker.setCurrentIndex(picker.findData("scripted/vision-test"))
        picker.activated.emit(picker.currentIndex())  # what choosing it in the popup emits
        await until(lambda: chat.current.model == "scripted/vision-test", 30, "the switch")
        await ask("second", 4)
        first, second = (chat.transcript.widgets[m.id] for m in chat.transcript.messages[1::2])
        assert first.switch_mark is None
        assert second.switch_mark is not None
        expected = "Model switched from scripted/gpt-test to scripted/vision-test"
        assert second.switch_mark.text() == expected
        chat_id = chat.current.id
        await chat.new_chat()
        await chat.open(chat_id)  # read back from the store: still marked
        widgets = [chat.transcript.widgets[m.id] for m in chat.transcript.messages[1::2]]
        assert [w.switch_mark.text() if w.switch_mark else None for w in widgets] == [
            None,
            expected,
        ]
    assert [r.body["model"] for r in models.requests] == ["gpt-test", "vision-test"]


async def test_a_turn_that_does_not_fit_offers_summarise_and_trim_and_trim_goes_on(
    models, qtbot: QtBot
) -> None:
    write_config(models, everything=False)
    models.state.contexts = {"gpt-test": 12000}  # from the server's model list
    models.script(text("Noted."), text("Answered."))
    async with running_app(wait_for_server=False) as desktop:
        chat = desktop.chat
        await until(lambda: chat.current is not None, 30, "a chat")
        for question, count in (("alpha " * 3334, 2), ("bravo " * 2200, 4)):
            chat.composer.input.insertPlainText(question)
            qtbot.keyClick(chat.composer.input, Qt.Key.Key_Return)
            await until(
                lambda c=count: not chat.running and len(chat.transcript.messages) == c, 60, "turn"
            )
        failed = chat.transcript.widgets[chat.transcript.messages[-1].id]
        assert "does not fit scripted/gpt-test's context (12,000 tokens)" in failed.status.text()
        assert failed.compact_buttons is not None
        summarise, trim = failed.compact_buttons
        assert summarise.isVisible() and trim.isVisible()
        assert len(models.requests) == 1  # nothing was sent without the person's say
        qtbot.mouseClick(trim, Qt.MouseButton.LeftButton)
        await until(lambda: len(models.requests) == 2 and not chat.running, 60, "the retry")
        await until(lambda: chat.transcript.messages[-1].text == "Answered.", 30, "the answer")
    sent = models.requests[1].body["messages"]
    assert [m["role"] for m in sent] == ["system", "user"]
    assert sent[1]["content"].startswith("bravo")
