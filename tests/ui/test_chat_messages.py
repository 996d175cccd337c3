"""A message's actions as a person uses them in the app: Copy (plain text) and Copy
Markdown, a code block's Copy, a long tool result collapsed until "Show all", and the
jump to the latest message (its button, End and Ctrl+End)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtTest import QTest
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
