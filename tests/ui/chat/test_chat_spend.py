"""A real spend limit through the pane: server-everything's get-sum costs 2 credits, the
chat may spend 5; the scripted model calls it until the limit. The person sees the meter
count up, the inline "Spend limit reached" question with the amounts at the limit, clicks
Allow Once, then Deny the next time, and the model is told."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QPalette
from pytestqt.qtbot import QtBot

from portico.prompts import ApprovalChoice
from portico.ui.palette import tone_color
from tests.servers.model_server import text, tool_call
from tests.ui.chat_helpers import model_server, models, needs_npm, running_app, write_config
from tests.ui.qt_helpers import until

pytestmark = [needs_npm, pytest.mark.slow]
__all__ = ["model_server", "models"]


async def test_the_spend_limit_asks_in_the_card_with_the_amounts(models, qtbot: QtBot) -> None:
    write_config(models, tool_costs={"get-sum": 2}, spend_limit=5, cost_unit="credits")
    models.script(
        tool_call("everything__get-sum", {"a": 1, "b": 1}),
        tool_call("everything__get-sum", {"a": 2, "b": 2}),
        tool_call("everything__get-sum", {"a": 3, "b": 3}),  # 4 + 2 > 5: asks
        tool_call("everything__get-sum", {"a": 4, "b": 4}),  # past the limit: asks again
        text("I stopped adding: you declined the fourth sum."),
    )
    async with running_app() as desktop:
        chat = desktop.chat
        meter = chat.pane.spend
        assert meter.isVisible() and meter.text() == "Spend: everything 0/5 credits"
        qtbot.keyClicks(chat.composer.input, "add numbers until the budget is gone")
        qtbot.keyClick(chat.composer.input, Qt.Key.Key_Return)

        def cards():  # type: ignore[no-untyped-def]
            return list(chat.cards.values())

        await until(lambda: len(cards()) >= 3, 60, "the third call")
        first, second, third = cards()[:3]
        assert first.state.outcome == "ok" and second.state.outcome == "ok"
        assert first.approval is None and second.approval is None  # under the limit: no ask
        await until(lambda: third.approval is not None, 30, "the spend question")
        panel = third.approval
        assert meter.text() == "Spend: everything 4/5 credits"
        assert panel.title.text() == "<b>Spend limit reached</b>"
        details = panel.details.text()
        assert "past the limit of 5 credits on 'everything'" in details
        assert "Costs about 2 credits" in details
        assert "This chat has used about 4 credits on 'everything' (limit 5)" in details
        assert set(panel.buttons) == {ApprovalChoice.ONCE, ApprovalChoice.DENY}
        assert desktop.window.focusWidget() is panel.deny_button  # Enter never spends
        assert desktop.prompter is not None and desktop.prompter.current is None  # no dialog
        qtbot.mouseClick(panel.buttons[ApprovalChoice.ONCE], Qt.MouseButton.LeftButton)
        await until(lambda: third.state.outcome == "ok", 30, "the approved call")
        await until(lambda: meter.text() == "Spend: everything 6/5 credits", 10, "the meter")
        shown = meter.palette().color(QPalette.ColorRole.WindowText)
        assert shown == tone_color("warning", role=QPalette.ColorRole.Window)  # at the limit

        await until(lambda: len(cards()) == 4, 30, "the fourth call")
        fourth = cards()[3]
        await until(lambda: fourth.approval is not None, 30, "the question again")
        assert "already reached the limit of 5 credits" in fourth.approval.details.text()
        assert "used about 6 credits" in fourth.approval.details.text()
        deny = fourth.approval.deny_button
        await until(lambda: desktop.window.focusWidget() is deny, 10, "Deny to hold the focus")
        qtbot.keyClick(deny, Qt.Key.Key_Space)  # the keyboard's way to press it
        await until(lambda: fourth.state.outcome is not None, 30, "the denied call")
        assert fourth.state.outcome == "denied"
        assert fourth.status.text() == "You denied this call"
        await until(lambda: not chat.running, 30, "the turn to end")
        assert meter.text() == "Spend: everything 6/5 credits"  # a denied call costs nothing
        answer = chat.transcript.widgets[chat.transcript.messages[-1].id]
        assert "you declined the fourth sum" in answer.plain_text()
        sent = [m for r in models.requests for m in r.body.get("messages", [])]
        told = [m["content"] for m in sent if m["role"] == "tool"]
        assert any("The person denied the call" in content for content in told)
