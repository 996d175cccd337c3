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
            None, expected
        ]
    assert [r.body["model"] for r in models.requests] == ["gpt-test", "vision-test"]
