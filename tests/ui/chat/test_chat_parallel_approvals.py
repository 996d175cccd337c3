"""Two parallel calls with the same arguments in one answer: each card asks its own
question (the question names its call; matching questions to cards by equality could not
tell the two apart), Deny in the first card denies the first call only, and each question
shows in its card as soon as the call starts (no wait for a match)."""

from __future__ import annotations

import time

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from portico.chat import events as ev
from portico.prompts import ApprovalChoice
from portico.ui.runtime_thread.chat_service import InlineApproval
from tests.servers.model_server import text, tool_calls
from tests.ui.chat_helpers import model_server, models, needs_npm, running_app, write_config
from tests.ui.qt_helpers import until

pytestmark = [needs_npm, pytest.mark.slow]
__all__ = ["model_server", "models"]

OLD_MATCH_WAIT = 1.0  # what a question could wait for its event before


async def test_two_identical_calls_get_their_own_approvals(models, qtbot: QtBot) -> None:
    write_config(models)
    models.script(
        tool_calls(
            ("everything__toggle-simulated-logging", {}),
            ("everything__toggle-simulated-logging", {}),
        ),
        text("One ran, one was denied."),
    )
    async with running_app() as desktop:
        chat = desktop.chat
        started: dict[str, float] = {}
        asked: dict[str, float] = {}

        def rendered(event: object) -> None:
            if isinstance(event, ev.ToolCallStarted):
                started[event.id] = time.monotonic()
            elif isinstance(event, InlineApproval):
                asked[event.call_id] = time.monotonic()

        chat.eventRendered.connect(rendered)
        qtbot.keyClicks(chat.composer.input, "toggle the logging twice")
        qtbot.keyClick(chat.composer.input, Qt.Key.Key_Return)
        await until(lambda: len(chat.cards) == 2, 30, "two cards")
        first, second = chat.cards.values()
        await until(lambda: first.approval and second.approval, 30, "both questions")
        assert set(asked) == set(started) == set(chat.cards)
        for call_id in started:  # the question came with the card, not a second later
            assert asked[call_id] - started[call_id] < 0.3 * OLD_MATCH_WAIT
        assert desktop.prompter is not None and desktop.prompter.current is None  # no dialog
        first.approval.buttons[ApprovalChoice.DENY].click()
        await until(lambda: first.state.outcome is not None, 30, "the denied call")
        assert first.state.outcome == "denied" and second.state.outcome is None
        assert second.approval is not None  # still asking: its own question
        second.approval.buttons[ApprovalChoice.ONCE].click()
        await until(lambda: second.state.outcome == "ok", 30, "the approved call")
        await until(lambda: not chat.running, 30, "the turn's end")
        assert first.state.outcome == "denied"
