"""The context meter in the chat pane: what the next request will send (a local
estimate), its breakdown on click, and the warning near the model's context length."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from tests.servers.model_server import text
from tests.ui.chat_helpers import model_server, models, running_app, write_config
from tests.ui.qt_helpers import until

pytestmark = pytest.mark.slow
__all__ = ["model_server", "models"]


async def test_the_meter_shows_the_next_request_and_warns_near_the_context(
    models, qtbot: QtBot
) -> None:
    path = write_config(models)
    toml = path.read_text()
    header = "[models.providers.scripted]\n"
    assert header in toml
    path.write_text(toml.replace(header, header + "context_length = 6000\nmax_tokens = 200\n"))
    models.script(text("Short."), text("Fine."))
    async with running_app() as desktop:
        chat, pane = desktop.chat, desktop.chat.pane
        for question, count in (("A short question?", 2), ("word " * 4000, 4)):
            chat.composer.input.insertPlainText(question)  # pasted, as a long text would be
            qtbot.keyClick(chat.composer.input, Qt.Key.Key_Return)
            await until(
                lambda c=count: not chat.running and len(chat.transcript.messages) == c, 60, "turn"
            )
            if count == 2:
                await until(lambda: "(2 messages)" in pane.context.toolTip(), 30, "the meter")
                shown = pane.context.text()
                assert shown.endswith("of 6,000 tokens (estimate)"), shown
                assert not pane.context_details.isVisible()
                qtbot.mouseClick(pane.context, Qt.MouseButton.LeftButton)
                details = pane.context_details.text()
                assert pane.context_details.isVisible()
                assert "Messages: ~" in details and "(2 messages)" in details
                assert "Tools of tool_search: ~" in details  # everything's tools are deferred
                assert details.endswith("not by the provider.")
                assert pane.context.toolTip() == details
        # 20,000 characters more: about 5,000 tokens with the answer's 200 nearly fill 6,000
        await until(lambda: pane.context.text().endswith("nearly full"), 30, "the warning")
        assert "Nearly full" in pane.context_details.text()
    assert len(models.requests) == 2  # the meter asked the model server nothing
