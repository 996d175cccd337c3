"""The app opened in a project: the chat pane names what the chat takes from it (its
instructions on or off, the model, the tool set); the instructions are shown in full in
the trust review before the first answer uses them, and Trust turns them on."""

from __future__ import annotations

import asyncio

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from portico.ui.app import DesktopApp
from portico.ui.loop import ensure_application
from tests.servers.model_server import text
from tests.ui.chat_helpers import model_server, models, write_config
from tests.ui.qt_helpers import until

pytestmark = pytest.mark.slow
__all__ = ["model_server", "models"]


async def test_the_pane_names_the_projects_instructions_model_and_tools(
    models, qtbot: QtBot, tmp_path
) -> None:
    write_config(models, everything=False)
    folder = tmp_path / "proj"
    (folder / ".portico").mkdir(parents=True)
    (folder / ".portico" / "instructions.md").write_text("Answer in haiku.\n")
    (folder / ".portico" / "config.yaml").write_text("chat:\n  servers: [everything]\n")
    models.script(text("Old pond."))
    desktop = DesktopApp(ensure_application(), project=folder)
    run = asyncio.ensure_future(desktop.run())
    try:
        chat = desktop.chat
        await until(lambda: chat.current is not None, 60, "a chat")
        label = chat.pane.project
        await until(lambda: label.isVisible(), 30, "the project line")
        assert label.text().startswith("Project proj: instructions off")
        assert label.text().endswith("model scripted/gpt-test · servers everything")
        chat.composer.input.insertPlainText("Hello")
        qtbot.keyClick(chat.composer.input, Qt.Key.Key_Return)
        review = await until(lambda: desktop.prompter.current, 60, "the review")  # type: ignore[union-attr]
        assert review.launch.text() == "line 1: Answer in haiku."
        assert not models.requests  # nothing is sent before the person decided
        review.trust_button.click()
        await until(lambda: not chat.running and len(chat.transcript.messages) == 2, 60, "turn")
        await until(lambda: "instructions on" in label.text(), 30, "instructions on")
    finally:
        desktop.request_quit()
        assert await asyncio.wait_for(run, 60) == 0
    assert "Answer in haiku." in models.requests[0].body["messages"][0]["content"]
