"""After a turn the transcript keeps its widgets: the core's copy of the messages is
taken in (ids, siblings) without rebuilding what is shown, so an expanded result stays
expanded and a card is the same object."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot

from portico.prompts import ApprovalChoice
from tests.servers.model_server import text, tool_call
from tests.ui.chat_helpers import model_server, models, needs_npm, running_app, write_config
from tests.ui.qt_helpers import until

__all__ = ["model_server", "models"]

LONG = "\n".join(f"line {n} of the echo" for n in range(1, 31))


@pytest.mark.slow
@needs_npm
async def test_an_expanded_result_stays_expanded_after_the_turn(models, qtbot: QtBot) -> None:
    write_config(models)
    models.script(
        tool_call("everything__echo", {"message": LONG}, delay=0.3),
        text("Echoed."),
    )
    async with running_app() as desktop:
        chat = desktop.chat
        rebuilt: list[int] = []
        chat.transcript.rebuilt.connect(lambda: rebuilt.append(1))
        qtbot.keyClicks(chat.composer.input, "Echo thirty lines")
        qtbot.keyClick(chat.composer.input, Qt.Key.Key_Return)
        card = await until(lambda: next(iter(chat.cards.values()), None), 30, "the card")

        def settled() -> bool:
            if card.approval is not None:
                card.approval.buttons[ApprovalChoice.ONCE].click()
            return card.state.outcome == "ok"

        await until(settled, 30, "the echo call")
        assert card.expand_button is not None
        qtbot.mouseClick(card.expand_button, Qt.MouseButton.LeftButton)
        assert card.expand_button.text() == "Show less"
        await until(lambda: not chat.running, 30, "the turn to end")
        # the after-turn resync: the core's copy of the chat, taken from the runtime thread
        await until(lambda: len(chat.current.messages) == 2, 30, "the resync")
        assert rebuilt == []
        # A command's turn stores no message: its echo and its answer stay on screen as
        # they are, and so does everything before them.
        before = chat.current
        qtbot.keyClicks(chat.composer.input, "/help")
        qtbot.keyClick(chat.composer.input, Qt.Key.Key_Return)
        await until(lambda: chat.transcript.messages[-1].text == "/help", 10, "the echo")
        await until(lambda: not chat.running, 30, "the command's turn")
        await until(lambda: chat.current is not before, 30, "the resync")
        assert rebuilt == []
        assert chat.cards[card.state.id] is card and card.expand_button.text() == "Show less"
        assert [m.text for m in chat.transcript.messages][-1] == "/help"
        notices = [
            w.text()
            for w in chat.transcript.findChildren(QLabel, "")
            if w.accessibleName() == "info notice" and w.isVisible()
        ]
        assert any("/compact" in n for n in notices)  # the help stays on screen
        # A command that fails has no stored answer either: its line stays.
        before = chat.current
        qtbot.keyClicks(chat.composer.input, "/compact squeeze")
        qtbot.keyClick(chat.composer.input, Qt.Key.Key_Return)
        await until(lambda: chat.current is not before and not chat.running, 30, "the resync")
        failed = chat.transcript.widgets[chat.transcript.messages[-1].id]
        assert failed.status.isVisible() and "summarise or trim" in failed.status.text()
        assert rebuilt == []
        answer = chat.transcript.widgets[chat.transcript.messages[1].id]
        assert next(iter(answer.cards.values())) is card and chat.cards[card.state.id] is card
        assert card.result_text is not None and "line 30 of the echo" in card.result_text.text()
