"""A turn of text, a tool call, then more text (each round with its thinking) shows each
piece once, in order: while it streams, in Select text's segments, and in a restarted
app that reopens the chat from the store."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from portico.ui.chat.find_bar import searchable
from portico.ui.chat.markdown_view import MarkdownView
from portico.ui.chat.message_widget import MessageWidget
from portico.ui.chat.segments import message_segments
from portico.ui.chat.thinking import ThinkingView
from portico.ui.chat.tool_card import ToolCard
from tests.servers.model_server import text
from tests.ui.chat_helpers import model_server, models, needs_npm, running_app, write_config
from tests.ui.qt_helpers import until

pytestmark = [needs_npm, pytest.mark.slow]
__all__ = ["model_server", "models"]

FIRST = "The person wants a sum: the tool does it."
SECOND = "The tool said 42."


def _shown(widget: MessageWidget) -> list[tuple[str, str]]:
    """The answer's parts in order: (kind, what it shows)."""
    out = []
    for i in range(widget.parts.count()):
        part = widget.parts.itemAt(i).widget()
        if isinstance(part, ThinkingView):
            out.append(("thinking", part.text))
        elif isinstance(part, MarkdownView):
            out.append(("text", part.text))
        elif isinstance(part, ToolCard):
            out.append(("card", part.state.tool))
    return out


EXPECTED = [
    ("thinking", FIRST),
    ("text", "Adding."),
    ("card", "get-sum"),
    ("thinking", SECOND),
    ("text", "It is 42."),
]


def _check(widget: MessageWidget) -> None:
    assert _shown(widget) == EXPECTED
    assert widget.plain_text() == "Adding.\n\nIt is 42."
    texts = [s.text for s in widget.segments() if s.kind == "text"]
    assert texts == ["Adding.", "It is 42."]


async def test_text_tool_text_shows_each_piece_once_live_and_reopened(models, qtbot: QtBot) -> None:
    write_config(models)
    models.script(
        {
            "text": "Adding.",
            "tool_calls": [{"name": "everything__get-sum", "arguments": {"a": 2, "b": 40}}],
            "reasoning": FIRST,
        },
        text("It is 42.", reasoning=SECOND),
    )
    async with running_app() as desktop:
        chat = desktop.chat
        qtbot.keyClicks(chat.composer.input, "2 + 40?")
        qtbot.keyClick(chat.composer.input, Qt.Key.Key_Return)

        def answered() -> bool:
            messages = chat.transcript.messages
            widget = chat.transcript.widgets.get(messages[-1].id) if messages else None
            return not chat.running and widget is not None and "42." in widget.plain_text()

        await until(answered, 60, "the turn to end")
        answer_id = chat.transcript.messages[-1].id
        _check(chat.transcript.widgets[answer_id])
        first_id = chat.current.id
    async with running_app() as desktop:
        chat = desktop.chat
        await until(lambda: first_id in chat.place.conversations.ids(), 30, "the chat listed")
        chat.place.conversations.select(first_id)
        chat.place.conversations.selected.emit(first_id)
        await until(lambda: chat.current.id == first_id, 30, "the chat to reopen")
        await until(lambda: answer_id in chat.transcript.widgets, 30, "the answer shown")
        _check(chat.transcript.widgets[answer_id])
        stored = message_segments(chat.transcript.messages[-1])  # a message not yet built
        assert [s.text for s in stored if s.kind == "text"] == ["Adding.", "It is 42."]
        assert searchable(chat.transcript.messages[-1]).count("It is 42.") == 1  # find: one match
