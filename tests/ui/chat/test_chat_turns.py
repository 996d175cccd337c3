"""Full turns in the app: type, send, the model calls server-everything's tools, the
inline approval is clicked, the card shows progress and then the result and its image,
the answer streams. Stop cancels a long call; regenerate and edit-and-resend make
branches the arrows switch between; a restarted app resumes the chat with its tools."""

from __future__ import annotations

import json

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from portico.prompts import ApprovalChoice
from tests.servers.model_server import text, tool_call, tool_calls
from tests.ui.chat_helpers import model_server, models, needs_npm, running_app, write_config
from tests.ui.qt_helpers import until

pytestmark = [needs_npm, pytest.mark.slow]
__all__ = ["model_server", "models"]


async def test_a_full_turn_with_inline_approval_progress_and_image(models, qtbot: QtBot) -> None:
    write_config(models)
    models.script(
        tool_call("everything__toggle-simulated-logging", {}, usage={"input": 10, "output": 1}),
        tool_call(
            "everything__trigger-long-running-operation",
            {"duration": 2, "steps": 4},
            usage={"input": 200, "output": 2},
        ),
        tool_call("everything__get-tiny-image", {}, usage={"input": 3000, "output": 3}),
        text(
            "Logging is on, the operation finished and here is the image.",
            delay=0.01,
            usage={"input": 40000, "output": 4},
        ),
    )
    async with running_app() as desktop:
        chat = desktop.chat
        window = desktop.window
        assert window.place == "Chats"
        field = chat.composer.input
        assert field.hasFocus() or window.focusWidget() is field  # type at once
        assert chat.composer.model_picker.currentData() == "scripted/gpt-test"
        qtbot.keyClicks(field, "Turn logging on, run the long operation, show the image")
        qtbot.keyClick(field, Qt.Key.Key_Return)

        def card(tool: str):  # type: ignore[no-untyped-def]
            return next((c for c in chat.cards.values() if c.state.tool == tool), None)

        toggle = await until(lambda: card("toggle-simulated-logging"), 30, "the first card")
        await until(lambda: toggle.approval is not None, 30, "the inline approval")
        panel = toggle.approval
        assert window.focusWidget() is panel.deny_button  # keyboard: Deny holds the focus
        assert desktop.prompter is not None and desktop.prompter.current is None  # no dialog
        panel.buttons[ApprovalChoice.ONCE].click()
        await until(lambda: toggle.state.outcome == "ok", 30, "the approved call to finish")

        long = await until(lambda: card("trigger-long-running-operation"), 30, "the long call")
        await until(lambda: long.progress.isVisible(), 30, "progress on the card")
        assert long.cancel_button.isVisible()
        await until(lambda: long.state.outcome == "ok", 30, "the long call to finish")
        assert long.status.text() == "Done"

        image = await until(lambda: card("get-tiny-image"), 30, "the image card")
        await until(lambda: image.thumbs and image.thumbs[0].decoded, 30, "the image inline")
        assert not image.thumbs[0].pixmap().isNull()

        await until(lambda: not chat.running, 60, "the turn to end")
        answer = chat.transcript.widgets[chat.transcript.messages[-1].id]
        assert "here is the image" in answer.plain_text()
        # the turn's four requests, as the provider counted them, on the answer and above
        assert answer.tokens is not None and answer.tokens.text() == "43,210 in · 10 out"
        assert chat.pane.usage.text() == "Turn: 43,210 in · 10 out  ·  Chat: 43,210 in · 10 out"
        assert field.isEnabled()


async def test_stop_during_a_long_tool_call_cancels_it(models, qtbot: QtBot) -> None:
    write_config(models)
    models.script(
        tool_call("everything__trigger-long-running-operation", {"duration": 30, "steps": 30}),
        text("never reached"),
    )
    async with running_app() as desktop:
        chat = desktop.chat
        qtbot.keyClicks(chat.composer.input, "run it")
        qtbot.keyClick(chat.composer.input, Qt.Key.Key_Return)
        card = await until(lambda: next(iter(chat.cards.values()), None), 30, "the card")
        await until(lambda: card.progress.isVisible(), 30, "progress")
        qtbot.keyClick(chat.composer.input, Qt.Key.Key_Escape)  # Esc stops
        await until(lambda: not chat.running, 15, "the turn to stop")
        assert card.state.outcome == "cancelled" and card.status.text() == "Cancelled"
        answer = chat.transcript.widgets[chat.transcript.messages[-1].id]
        assert answer.status.text().startswith("Stopped")
        assert answer.retry_button.isVisible()
        assert len(models.requests) == 1  # the tool's result never went back to the model


async def test_a_cards_cancel_stops_only_that_call_and_the_turn_goes_on(
    models, qtbot: QtBot
) -> None:
    write_config(models)
    models.script(
        tool_calls(
            ("everything__trigger-long-running-operation", {"duration": 30, "steps": 30}),
            ("everything__get-sum", {"a": 1, "b": 2}),
        ),
        text("You cancelled the long job; 1 + 2 is 3."),
    )
    async with running_app() as desktop:
        chat = desktop.chat
        qtbot.keyClicks(chat.composer.input, "run the long job and add 1 and 2")
        qtbot.keyClick(chat.composer.input, Qt.Key.Key_Return)

        def card(tool: str):  # type: ignore[no-untyped-def]
            return next((c for c in chat.cards.values() if c.state.tool == tool), None)

        long = await until(lambda: card("trigger-long-running-operation"), 30, "the long card")
        await until(lambda: long.progress.isVisible(), 30, "progress on the long card")
        total = card("get-sum")
        assert total is not None and total.state.outcome is None
        qtbot.mouseClick(long.cancel_button, Qt.MouseButton.LeftButton)
        await until(lambda: long.state.outcome == "cancelled", 15, "the long call to end")
        assert long.status.text() == "You cancelled this call"
        assert "model was told" in long.error_label.text()
        assert not long.cancel_button.isVisible()
        await until(lambda: total.state.outcome == "ok", 30, "the other call to finish")
        assert total.status.text() == "Done"
        await until(lambda: not chat.running, 30, "the turn to end")
        assert "1 + 2 is 3" in _last_answer(chat)  # the turn went on to the model's answer
        answer = chat.transcript.widgets[chat.transcript.messages[-1].id]
        assert not answer.status.text().startswith("Stopped")
        sent = [m for r in models.requests for m in r.body.get("messages", [])]
        told = [m["content"] for m in sent if m["role"] == "tool"]
        assert any("person cancelled this call" in content for content in told)


async def test_regenerate_edit_and_the_arrows_switch_branches(models, qtbot: QtBot) -> None:
    write_config(models, everything=False)
    models.script(text("Paris."), text("It is Paris."), text("Lisbon."))
    async with running_app(wait_for_server=False) as desktop:
        chat = desktop.chat
        qtbot.keyClicks(chat.composer.input, "Capital of France?")
        qtbot.keyClick(chat.composer.input, Qt.Key.Key_Return)
        await until(lambda: not chat.running and len(chat.transcript.messages) == 2, 30, "answer")
        # the title is the question's first words, made without asking the model
        await until(lambda: "Capital of France?" in chat.place.conversations.titles(), 10, "row")
        assert chat.pane.title.text() == "Capital of France?"
        assert len(models.requests) == 1
        answer = _widget(chat, -1)
        assert not answer.branch_label.isVisible()  # one version: no switcher
        assert answer.regenerate_button.isVisible()
        answer.regenerate_button.click()
        await until(lambda: "It is Paris." in _last_answer(chat), 30, "the new answer")
        await until(lambda: not chat.running and chat.transcript.siblings, 30, "the branch")
        answer = _widget(chat, -1)
        assert answer.branch_label.isVisible() and _switcher(answer) == "‹ 2/2 ›"
        assert answer.prev_branch.isEnabled() and not answer.next_branch.isEnabled()
        answer.prev_branch.click()
        await until(lambda: _last_answer(chat) == "Paris.", 30, "the first answer back")
        assert _switcher(_widget(chat, -1)) == "‹ 1/2 ›"
        _widget(chat, -1).next_branch.click()
        await until(lambda: _last_answer(chat) == "It is Paris.", 30, "the second again")

        # the switch rebuilds the transcript on its own time: wait for the question shown
        question = await until(
            lambda: (w := _widget(chat, 0)).edit_button.isVisible() and w, 10, "the Edit button"
        )
        question.edit_button.click()
        assert question.editor is not None and question.editor.hasFocus()
        assert question.edit_send.isVisible()  # at once: Tab from the editor reaches it
        question.editor.setPlainText("Capital of Portugal?")
        question.edit_send.click()
        await until(lambda: not chat.running and "Lisbon." in _last_answer(chat), 30, "edit")
        await until(lambda: _widget(chat, 0).branch_label.isVisible(), 10, "the question's branch")
        assert _switcher(_widget(chat, 0)) == "‹ 2/2 ›"
        assert not _widget(chat, -1).branch_label.isVisible()  # the new answer has no versions
        told = [(m["role"], m["content"]) for m in models.requests[-1].body["messages"][1:]]
        assert told == [("user", "Capital of Portugal?")]  # the model reads this branch only
        _widget(chat, 0).prev_branch.click()
        await until(lambda: _last_answer(chat) == "It is Paris.", 30, "the old question back")
        assert _widget(chat, 0).plain_text() == "Capital of France?"
        assert _switcher(_widget(chat, 0)) == "‹ 1/2 ›"
        assert _switcher(_widget(chat, -1)) == "‹ 2/2 ›"
    assert not any("Write a title" in json.dumps(r.body) for r in models.requests)
    assert len(models.requests) == 3  # the three answers, no title request


def _widget(chat, index: int):  # type: ignore[no-untyped-def]
    return chat.transcript.widgets[chat.transcript.messages[index].id]


def _switcher(widget) -> str:  # type: ignore[no-untyped-def]
    """The branch switcher as a person reads it: the arrows and the label between."""
    return " ".join(
        (widget.prev_branch.text(), widget.branch_label.text(), widget.next_branch.text())
    )


def _last_answer(chat) -> str:  # type: ignore[no-untyped-def]
    messages = chat.transcript.messages
    if not messages:
        return ""
    widget = chat.transcript.widgets.get(messages[-1].id)
    return widget.plain_text() if widget is not None else ""


async def test_a_restarted_app_resumes_the_chat_with_its_tools(models, qtbot: QtBot) -> None:
    write_config(models)
    models.script(tool_call("everything__get-sum", {"a": 2, "b": 40}), text("42."))
    async with running_app() as desktop:
        chat = desktop.chat
        qtbot.keyClicks(chat.composer.input, "2 + 40?")
        qtbot.keyClick(chat.composer.input, Qt.Key.Key_Return)
        await until(lambda: not chat.running and "42." in _last_answer(chat), 60, "first turn")
        first_id = chat.current.id
    models.script(tool_call("everything__get-sum", {"a": 1, "b": 1}), text("That makes two."))
    async with running_app() as desktop:
        chat = desktop.chat
        await until(lambda: first_id in chat.place.conversations.ids(), 30, "the old chat listed")
        chat.place.conversations.select(first_id)
        chat.place.conversations.selected.emit(first_id)
        await until(lambda: chat.current.id == first_id, 30, "the old chat to open")
        cards = list(chat.cards.values())
        assert [c.state.tool for c in cards] == ["get-sum"]
        assert "42" in cards[0].result_text.text()  # type: ignore[union-attr]
        qtbot.keyClicks(chat.composer.input, "and 1 + 1?")
        qtbot.keyClick(chat.composer.input, Qt.Key.Key_Return)
        await until(
            lambda: not chat.running and "makes two" in _last_answer(chat), 60, "second turn"
        )
        cards = [c for w in chat.transcript.widgets.values() for c in w.cards.values()]
        assert [c.state.tool for c in cards] == ["get-sum", "get-sum"]
        assert all(c.state.outcome == "ok" for c in cards)
