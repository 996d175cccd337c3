"""A message's actions as a person uses them in the app: Copy (plain text) and Copy
Markdown, a code block's Copy, a long tool result collapsed until "Show all", and the
jump to the latest message (its button, End and Ctrl+End)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot

from portico.chat.messages import Message
from portico.prompts import ApprovalChoice
from portico.ui.chat.markdown_view import CodeBlockWidget
from portico.ui.chat.transcript import TranscriptView
from tests.servers.model_server import text, tool_call
from tests.ui.chat_helpers import (
    make_active,
    model_server,
    models,
    needs_npm,
    running_app,
    write_config,
)
from tests.ui.qt_helpers import until

__all__ = ["model_server", "models"]

ANSWER = """The **echo** came back; see [the docs](https://example.com/docs).

- first
- second

```python
print("hi")
```
"""
LONG = "\n".join(f"line {n} of the echo" for n in range(1, 31))


@pytest.mark.slow
@needs_npm
async def test_copy_a_message_a_code_block_and_expand_a_long_result(models, qtbot: QtBot) -> None:
    write_config(models)
    models.script(tool_call("everything__echo", {"message": LONG}), text(ANSWER))
    async with running_app() as desktop:
        chat = desktop.chat
        qtbot.keyClicks(chat.composer.input, "Echo thirty lines")
        qtbot.keyClick(chat.composer.input, Qt.Key.Key_Return)
        card = await until(lambda: next(iter(chat.cards.values()), None), 30, "the card")

        def settled() -> bool:
            if card.approval is not None:
                card.approval.buttons[ApprovalChoice.ONCE].click()
            return card.state.outcome == "ok"

        await until(settled, 30, "the echo call")
        await until(lambda: not chat.running, 30, "the turn to end")

        # The long result shows its first lines, and all of them after "Show all".
        assert card.result_text is not None and card.expand_button is not None
        shown = card.result_text.text()
        assert "line 8 of the echo" in shown and "line 9 of the echo" not in shown
        assert card.expand_button.text() == "Show all (30 lines)"
        collapsed_height = card.result_text.heightForWidth(400)
        qtbot.mouseClick(card.expand_button, Qt.MouseButton.LeftButton)
        assert "line 30 of the echo" in card.result_text.text()
        assert card.expand_button.text() == "Show less"
        assert card.result_text.heightForWidth(400) > 2 * collapsed_height
        qtbot.mouseClick(card.expand_button, Qt.MouseButton.LeftButton)
        assert "line 9 of the echo" not in card.result_text.text()

        answer = chat.transcript.widgets[chat.transcript.messages[-1].id]
        clipboard = QGuiApplication.clipboard()
        qtbot.mouseClick(answer.copy_button, Qt.MouseButton.LeftButton)
        assert clipboard.text() == (
            'The echo came back; see the docs.\n\n- first\n- second\n\nprint("hi")'
        )
        assert answer.copy_button.text() == "Copied"
        qtbot.mouseClick(answer.copy_markdown_button, Qt.MouseButton.LeftButton)
        assert clipboard.text() == ANSWER.strip("\n") or clipboard.text() == ANSWER
        assert "**echo**" in clipboard.text() and "```python" in clipboard.text()

        code = answer.findChildren(CodeBlockWidget)
        assert len(code) == 1
        qtbot.mouseClick(code[0].copy_button, Qt.MouseButton.LeftButton)
        assert clipboard.text() == 'print("hi")\n'

        question = chat.transcript.widgets[chat.transcript.messages[0].id]
        qtbot.mouseClick(question.copy_button, Qt.MouseButton.LeftButton)
        assert clipboard.text() == "Echo thirty lines"


def test_jump_to_latest_by_its_button_end_and_ctrl_end(qtbot: QtBot) -> None:
    view = TranscriptView()
    qtbot.addWidget(view)
    view.resize(600, 400)
    view.show()
    make_active(view)
    messages = [
        Message(id=f"m{i}", role="user" if i % 2 == 0 else "assistant", text=f"Message {i}\n\n" * 4)
        for i in range(80)
    ]
    view.set_messages(messages, {})
    bar = view.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0 and bar.value() == bar.maximum())

    def scroll_up() -> None:
        def up() -> bool:  # at the top older messages get built, the newest dropped
            bar.setValue(0)
            return view.last < len(messages)

        qtbot.waitUntil(up, timeout=20000)
        view.append_text("m79", "")  # anything arriving shows the button
        view.flush()
        assert view.jump_button.isVisible() and not view.following

    for key in (None, Qt.Key.Key_End, "ctrl-end"):
        scroll_up()
        if key is None:
            qtbot.mouseClick(view.jump_button, Qt.MouseButton.LeftButton)
        elif key == "ctrl-end":
            QTest.keyClick(view.viewport(), Qt.Key.Key_End, Qt.KeyboardModifier.ControlModifier)
        else:
            inside = next(iter(view.widgets.values())).copy_button  # the focus in a message
            inside.setFocus()
            QTest.keyClick(inside, key)
        qtbot.waitUntil(lambda: bar.value() == bar.maximum())
        assert view.following and not view.jump_button.isVisible()
        assert view.last == len(messages) and "m79" in view.widgets


def _find_keys(field, key: Qt.Key, shift: bool = False) -> None:  # type: ignore[no-untyped-def]
    modifier = Qt.KeyboardModifier.ShiftModifier if shift else Qt.KeyboardModifier.NoModifier
    QTest.keyClick(field, key, modifier)


@pytest.mark.slow
@needs_npm
async def test_find_in_chat_counts_highlights_and_steps_through_messages_and_results(
    models, qtbot: QtBot
) -> None:
    write_config(models)
    models.script(
        tool_call("everything__echo", {"message": "a needle in the result"}),
        text("The **needle** answer."),
        text("Nothing to see."),
    )
    async with running_app() as desktop:
        chat = desktop.chat
        window = desktop.window
        qtbot.keyClicks(chat.composer.input, "Find the needle")
        qtbot.keyClick(chat.composer.input, Qt.Key.Key_Return)
        card = await until(lambda: next(iter(chat.cards.values()), None), 30, "the card")

        def settled() -> bool:
            if card.approval is not None:
                card.approval.buttons[ApprovalChoice.ONCE].click()
            return card.state.outcome == "ok"

        await until(settled, 30, "the echo call")
        await until(lambda: not chat.running, 30, "the first turn")
        qtbot.keyClicks(chat.composer.input, "And now?")
        qtbot.keyClick(chat.composer.input, Qt.Key.Key_Return)
        await until(lambda: not chat.running and len(chat.transcript.messages) == 4, 30, "two")

        pane = chat.pane
        bar = pane.find_bar
        assert not bar.isVisible()
        make_active(window)
        QTest.keyClick(chat.composer.input, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
        assert bar.isVisible() and window.focusWidget() is bar.field
        QTest.keyClicks(bar.field, "NEEDLE")  # any case
        await until(lambda: bar.count.text() == "3 of 3", 10, "three matches, the newest")
        answer = chat.transcript.widgets[chat.transcript.messages[1].id]
        question = chat.transcript.widgets[chat.transcript.messages[0].id]

        def current_in(widget) -> bool:  # type: ignore[no-untyped-def]
            from portico.ui.chat.marks import CURRENT

            texts = [w.text() for w in widget.findChildren(QLabel)]
            return any(CURRENT in t for t in texts)

        assert current_in(answer) and not current_in(question)
        # The card as shown now: when the stored chat differs from what was shown (the
        # next turn raced the last one's resync) the transcript is rebuilt from the store.
        card = next(iter(answer.cards.values()))
        assert card.result_text is not None and "ffe27a" in card.result_text.text()  # marked
        _find_keys(bar.field, Qt.Key.Key_Return)  # next: round to the first
        assert bar.count.text() == "1 of 3" and current_in(question)
        _find_keys(bar.field, Qt.Key.Key_Return)
        assert bar.count.text() == "2 of 3" and current_in(card)  # the tool's result
        _find_keys(bar.field, Qt.Key.Key_Return, shift=True)
        assert bar.count.text() == "1 of 3"
        QTest.keyClick(bar.field, Qt.Key.Key_F3)
        assert bar.count.text() == "2 of 3"
        QTest.keyClick(bar.field, Qt.Key.Key_F3, Qt.KeyboardModifier.ShiftModifier)
        assert bar.count.text() == "1 of 3"
        qtbot.mouseClick(bar.previous_button, Qt.MouseButton.LeftButton)
        assert bar.count.text() == "3 of 3"

        bar.field.clear()
        QTest.keyClicks(bar.field, "haystack")
        await until(lambda: bar.count.text() == "No matches", 10, "no match")
        QTest.keyClick(bar.field, Qt.Key.Key_Escape)
        assert not bar.isVisible()
        assert not current_in(answer) and not current_in(question)
        assert "ffe27a" not in card.result_text.text()


def test_find_goes_to_a_match_in_an_old_message_that_had_no_widget(qtbot: QtBot) -> None:
    from portico.ui.chat.pane import ChatPane

    pane = ChatPane()
    qtbot.addWidget(pane)
    pane.resize(700, 500)
    pane.show()
    messages = [
        Message(id=f"m{i}", role="user" if i % 2 == 0 else "assistant", text=f"Message {i}")
        for i in range(300)
    ]
    messages[3].text = "The rare word zebra, long ago."
    pane.transcript.set_messages(messages, {})
    assert "m3" not in pane.transcript.widgets
    pane.open_find()
    QTest.keyClicks(pane.find_bar.field, "zebra")
    qtbot.waitUntil(lambda: pane.find_bar.count.text() == "1 of 1")
    widget = pane.transcript.widgets["m3"]
    from portico.ui.chat.marks import CURRENT

    assert any(CURRENT in w.text() for w in widget.findChildren(QLabel))
    bar = pane.transcript.verticalScrollBar()
    top = widget.mapTo(pane.transcript.inner, widget.rect().topLeft()).y()
    qtbot.waitUntil(lambda: bar.value() <= top <= bar.value() + pane.transcript.viewport().height())
    assert pane.transcript.jump_button.isVisible()


@pytest.mark.slow
async def test_f1_lists_every_shortcut_from_where_it_is_bound(models, qtbot: QtBot) -> None:
    write_config(models, everything=False)
    async with running_app(wait_for_server=False) as desktop:
        window = desktop.window
        make_active(window)
        QTest.keyClick(desktop.chat.composer.input, Qt.Key.Key_F1)
        dialog = window.shortcuts_dialog
        assert dialog is not None and dialog.isVisible()
        rows = {(what, where): keys.split(", ") for keys, what, where in dialog.shown_rows()}
        expected = {
            ("Keyboard Shortcuts", "Everywhere"): ["F1"],
            ("Find in this chat", "Everywhere"): ["Ctrl+F"],
            ("Search all chats", "Everywhere"): ["Ctrl+Shift+F"],
            ("New chat", "Everywhere"): ["Ctrl+N"],
            ("Go to Servers", "Everywhere"): ["Ctrl+2"],
            ("Config Editor", "Everywhere"): ["Ctrl+,"],
            ("Restart", "Servers"): ["Ctrl+R"],
            ("Retry now", "Servers"): ["F5"],
            ("Remove", "Servers: the server list"): ["Del"],
            ("Send the message", "Chats: the message input"): ["Enter"],
            ("Stop the answer", "Chats: the message input"): ["Esc"],
            ("Rename the chat", "Chats: the conversation list"): ["F2"],
            ("Jump to the latest message", "Chats: the transcript"): ["End", "Ctrl+End"],
            ("Call tool", "Servers: Try it"): ["Ctrl+Return"],
        }
        for row, keys in expected.items():
            assert sorted(rows.get(row, [])) == sorted(keys), (row, rows.get(row))
        assert sorted(rows[("Next match", "Chats: find in chat")]) == ["Enter", "F3"]
        assert len(rows) == len(dialog.shown_rows())  # one row per thing done in a place

        # The filter narrows what is shown.
        QTest.keyClicks(dialog.filter, "chat list")
        QTest.keyClick(dialog.filter, Qt.Key.Key_Backspace)  # "chat lis"
        dialog.filter.setText("rename")
        assert [r[1] for r in dialog.shown_rows()] == ["Rename the chat"]
        qtbot.mouseClick(dialog.close_button, Qt.MouseButton.LeftButton)
        await until(lambda: window.shortcuts_dialog is None, 10, "the dialog closed")

        # A shortcut bound anywhere in the window is listed: no second list to keep.
        from portico.ui.shortcuts import Key, bind

        bind(window, Key(("Ctrl+Shift+K",), "Something new", "Everywhere"), lambda: None)
        dialog = window.show_shortcuts()
        assert ("Ctrl+Shift+K", "Something new", "Everywhere") in dialog.shown_rows()
        dialog.close()


def _switcher(widget) -> str:  # type: ignore[no-untyped-def]
    return " ".join(
        (widget.prev_branch.text(), widget.branch_label.text(), widget.next_branch.text())
    )


@pytest.mark.slow
async def test_regenerate_an_earlier_answer_makes_a_branch(models, qtbot: QtBot) -> None:
    write_config(models, everything=False)
    models.script(text("Paris."), text("Berlin."), text("It is Paris, on the Seine."))
    async with running_app(wait_for_server=False) as desktop:
        chat = desktop.chat
        transcript = chat.transcript
        for question, count in (("Capital of France?", 2), ("And of Germany?", 4)):
            qtbot.keyClicks(chat.composer.input, question)
            qtbot.keyClick(chat.composer.input, Qt.Key.Key_Return)
            await until(
                lambda n=count: not chat.running and len(transcript.messages) == n, 30, question
            )

        def widget(index: int):  # type: ignore[no-untyped-def]
            return transcript.widgets[transcript.messages[index].id]

        first, last = widget(1), widget(3)
        assert first.regenerate_button.isVisible() and last.regenerate_button.isVisible()
        qtbot.mouseClick(first.regenerate_button, Qt.MouseButton.LeftButton)
        await until(
            lambda: (
                not chat.running
                and len(transcript.messages) == 2
                and widget(1).plain_text() == "It is Paris, on the Seine."
            ),
            30,
            "the first answer again",
        )
        # The model was asked the first question only (the later turn is on the old branch).
        told = [(m["role"], m["content"]) for m in models.requests[-1].body["messages"][1:]]
        assert told == [("user", "Capital of France?")]
        await until(lambda: widget(1).branch_label.isVisible(), 10, "the switcher")
        assert _switcher(widget(1)) == "‹ 2/2 ›"
        qtbot.mouseClick(widget(1).prev_branch, Qt.MouseButton.LeftButton)
        await until(lambda: len(transcript.messages) == 4, 30, "the old branch back")
        assert [widget(i).plain_text() for i in (1, 3)] == ["Paris.", "Berlin."]
        assert _switcher(widget(1)) == "‹ 1/2 ›"
