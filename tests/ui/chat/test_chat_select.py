"""Selecting text across messages: Select text shows the conversation as one document; a
drag from one message into the next and Ctrl+C copy plain text with the author between
messages; Ctrl+A in the transcript selects the whole conversation; Esc goes back."""

from __future__ import annotations

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QGuiApplication, QTextCursor, QTextDocument
from pytestqt.qtbot import QtBot

from portico.chat.messages import Message, Round, ToolCall
from portico.ui.chat.markdown_view import RichLabel
from portico.ui.chat.pane import ChatPane
from portico.ui.chat.text_view import ConversationText

MESSAGES = [
    Message(id="u1", role="user", text="What is the capital of France?"),
    Message(
        id="a1",
        role="assistant",
        text="**Paris** is the capital.\n\n- about 2.1 million people\n- on the Seine",
        model="scripted/gpt-test",
        tool_calls=[
            ToolCall("c1", "atlas__lookup", {"city": "Paris"}, outcome="ok", result_text="ok")
        ],
        rounds=[
            Round("Let me check.", ["c1"]),
            Round("**Paris** is the capital.\n\n- about 2.1 million people\n- on the Seine", []),
        ],
    ),
    Message(id="u2", role="user", text="And of Portugal?"),
    Message(id="a2", role="assistant", text="Lisbon.", model="scripted/gpt-test"),
]


def _pane(qtbot: QtBot) -> ChatPane:
    pane = ChatPane()
    qtbot.addWidget(pane)
    pane.resize(800, 600)
    pane.show()
    pane.transcript.set_messages(list(MESSAGES), {})
    qtbot.waitExposed(pane)
    return pane


def _point(view: ConversationText, word: str, offset: int = 0) -> QPoint:
    """Where ``word`` (plus ``offset`` characters) is drawn in the view's viewport."""
    found = view.document().find(word, 0, QTextDocument.FindFlag.FindCaseSensitively)
    assert not found.isNull(), word
    cursor = QTextCursor(view.document())
    cursor.setPosition(found.selectionStart() + offset)
    return view.cursorRect(cursor).center()


def test_a_drag_from_one_message_into_the_next_copies_plain_text(qtbot: QtBot) -> None:
    pane = _pane(qtbot)
    button = pane.select_button
    assert button.isVisible() and button.accessibleName() == "Select text"
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    view = pane.text_view
    assert view is not None
    qtbot.waitUntil(lambda: not view.loading, timeout=5000)
    # the keyboard goes to the document (focusWidget: offscreen the window may be inactive)
    assert pane.stack.currentWidget() is view and pane.focusWidget() is view
    assert button.text() == "Back to chat"
    # what the person sees: the messages rendered, not their Markdown
    assert "**" not in view.toPlainText() and "Paris is the capital." in view.toPlainText()

    start = _point(view, "capital of France", len("capital of "))
    end = _point(view, "Paris is", len("Paris"))
    viewport = view.viewport()
    qtbot.mousePress(viewport, Qt.MouseButton.LeftButton, pos=start)
    qtbot.mouseMove(viewport, end)
    qtbot.mouseRelease(viewport, Qt.MouseButton.LeftButton, pos=end)
    qtbot.keyClick(view, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    copied = QGuiApplication.clipboard().text()
    assert copied == (
        "France?\n\nscripted/gpt-test\nLet me check.\nTool call atlas · lookup: Done\nParis"
    )
    assert QGuiApplication.clipboard().mimeData().hasHtml() is False  # plain text only

    qtbot.keyClick(view, Qt.Key.Key_Escape)  # clears the selection first
    assert pane.stack.currentWidget() is view and not view.textCursor().hasSelection()
    qtbot.keyClick(view, Qt.Key.Key_Escape)
    assert pane.stack.currentWidget() is pane.transcript
    assert button.text() == "Select text" and not button.isChecked()


def test_ctrl_a_in_a_message_selects_the_whole_conversation(qtbot: QtBot) -> None:
    pane = _pane(qtbot)
    answer = pane.transcript.widgets["a2"]
    label = answer.findChildren(RichLabel)[0]
    label.setFocus()
    qtbot.keyClick(label, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    view = pane.text_view
    assert view is not None and pane.stack.currentWidget() is view
    qtbot.waitUntil(lambda: not view.loading, timeout=5000)
    qtbot.keyClick(view, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    copied = QGuiApplication.clipboard().text()
    assert copied == (
        "You\nWhat is the capital of France?\n\n"
        "scripted/gpt-test\nLet me check.\nTool call atlas · lookup: Done\n"
        "Paris is the capital.\nabout 2.1 million people\non the Seine\n\n"
        "You\nAnd of Portugal?\n\n"
        "scripted/gpt-test\nLisbon."
    )
    pane.select_button.click()  # Back to chat
    assert pane.stack.currentWidget() is pane.transcript


def test_a_long_chat_shows_the_messages_around_where_the_person_was(qtbot: QtBot) -> None:
    pane = _pane(qtbot)
    many = [
        Message(id=f"m{i}", role="user" if i % 2 == 0 else "assistant", text=f"message {i}")
        for i in range(500)
    ]
    pane.transcript.set_messages(many, {})
    view = pane.select_text(everything=True)
    qtbot.waitUntil(lambda: not view.loading, timeout=10000)
    assert view.total == 500 and len(view.shown) == 200 and view.shown.stop == 500
    text = view.selected_plain_text()
    assert text.startswith("Messages 301–500 of 500")
    assert "message 300" in text and "message 499" in text and "message 299" not in text
