"""``portico chat``'s /help is the command table's terminal face (``commands.help_text``),
the same table the GUI's /help is made from."""

from __future__ import annotations

from pathlib import Path

import pytest

from portico.chat.commands import help_text
from tests.cli.test_cli_chat import run

pytestmark = pytest.mark.slow


def test_help_prints_the_command_tables_terminal_face(portico_home: Path) -> None:
    done = run("chat", "-q", "/help")
    assert done.returncode == 0, done.stderr
    assert help_text("cli") in done.stderr
    assert "/exit, /quit" in done.stderr and "F1" not in done.stderr
