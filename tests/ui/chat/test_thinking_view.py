"""The model's thinking in the transcript: one collapsed line per round ("Thinking (N
words)") that opens on a click, for a stored answer and while an answer streams."""

from __future__ import annotations

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from portico.chat.messages import Message, Round, ToolCall
from portico.ui.chat.message_widget import MessageWidget
from portico.ui.chat.thinking import ThinkingView
from portico.ui.chat.tool_card import CardState

THOUGHT = "The person wants a sum: the add tool does it."


def test_stored_thinking_shows_collapsed_and_opens_on_a_click(qtbot: QtBot) -> None:
    call = ToolCall("c1", "toolbox__add", {"a": 2, "b": 40}, outcome="ok", result_text="42")
    message = Message(
        "a1",
        "assistant",
        "It is 42.",
        tool_calls=[call],
        rounds=[Round("Adding.", ["c1"], THOUGHT), Round("It is 42.", [], "Done: say it.")],
    )
    widget = MessageWidget(message)
    qtbot.addWidget(widget)
    widget.show()
    views = widget.findChildren(ThinkingView)
    assert [v.text for v in views] == [THOUGHT, "Done: say it."]
    first = views[0]
    assert first.toggle.text() == "▸ Thinking (10 words)" and not first.body.isVisible()
    qtbot.mouseClick(first.toggle, Qt.MouseButton.LeftButton)
    assert first.body.isVisible() and first.body.text() == THOUGHT
    assert first.toggle.text().startswith("▾ Thinking")
    qtbot.mouseClick(first.toggle, Qt.MouseButton.LeftButton)
    assert not first.body.isVisible()
    # the thinking of a round comes before its text and its cards
    order = [type(widget.parts.itemAt(i).widget()).__name__ for i in range(widget.parts.count())]
    assert order == ["ThinkingView", "MarkdownView", "ToolCard", "ThinkingView", "MarkdownView"]
    assert "Done: say it." not in widget.plain_text()  # Copy takes the answer only


def test_streamed_thinking_grows_in_one_collapsed_line_per_round(qtbot: QtBot) -> None:
    widget = MessageWidget(Message("a1", "assistant"))
    qtbot.addWidget(widget)
    widget.show()
    for piece in ("The person", " wants", " a sum."):
        widget.stream_thinking(piece)
    widget.stream_text("Adding.")
    widget.add_card(CardState("c1", "toolbox", "add", "toolbox__add", {}))
    widget.stream_thinking("Now answer.")
    views = widget.findChildren(ThinkingView)
    assert [v.text for v in views] == ["The person wants a sum.", "Now answer."]
    assert all(not v.body.isVisible() for v in views)
