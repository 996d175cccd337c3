"""One command table (``portico.chat.commands.COMMANDS``) for both faces: ``/help`` is
made from it, every built-in it names is one the chat runs, and every word the parser
takes as a built-in has its row."""

from __future__ import annotations

import pytest

from portico.chat import commands
from portico.chat.events import Notice, TurnFailed
from tests.chat.conftest import chat_setup, collect


def test_every_builtin_the_parser_takes_has_a_row_and_both_helps_list_it() -> None:
    for name in commands.BUILTINS:
        assert commands.parse(f"/{name}").kind == "builtin"
        row = next(c for c in commands.COMMANDS if c.name == name)
        for face in row.faces:
            assert row.usage in commands.help_text(face)
            assert row.what in commands.help_text(face)
    assert commands.parse("/nope").kind == "unknown"
    cli, gui = commands.help_text("cli"), commands.help_text("gui")
    assert "/exit" in cli and "/exit" not in gui  # the terminal's own
    assert "F1 lists the keyboard shortcuts" in gui and "Ctrl+D leaves" in cli
    assert commands.hint("model") == next(c.what for c in commands.COMMANDS if c.name == "model")


@pytest.mark.parametrize("face", ["cli", "gui"])
async def test_help_answers_with_the_faces_table_and_every_builtin_runs(face: str) -> None:
    async with chat_setup(face=face) as s:
        chat = await s.host.new()
        helped = await collect(chat.send("/help"))
        assert [n.text for n in helped.of(Notice)] == [commands.help_text(face)]  # type: ignore[arg-type]
        for name in commands.BUILTINS:  # none is "unknown" to the chat that runs them
            run = await collect(chat.send(f"/{name}"))
            failed = run.of(TurnFailed)
            assert not any("unknown command" in f.error for f in failed), (name, failed)
