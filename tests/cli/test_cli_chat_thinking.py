"""The model's thinking in ``portico chat``: one dimmed collapsed line by default ("▸
Thinking (N words; --show-thinking shows it)"), the thought itself, dimmed, with
``--show-thinking``; never on stdout with the answer. The scripted model server streams it
as OpenAI-compatible servers do (``reasoning_content``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from portico.paths import paths
from tests.cli.test_cli_chat import run
from tests.cli.test_cli_chat_terminal import Terminal
from tests.servers.model_server import ModelServer, text

pytestmark = pytest.mark.slow

THOUGHT = "The person greets me: greet back, briefly."
DIM = "\x1b[2m"


@pytest.fixture
def scripted(portico_home: Path) -> Iterator[ModelServer]:
    with ModelServer() as server:
        paths().global_yaml.parent.mkdir(parents=True, exist_ok=True)
        paths().global_yaml.write_text(
            "models:\n  providers:\n    scripted:\n      kind: openai\n"
            f"      base_url: {server.openai_url}\n      models: [gpt-test]\n"
            "  default: scripted/gpt-test\n"
        )
        yield server


def test_thinking_is_one_collapsed_line_unless_asked_for(scripted: ModelServer) -> None:
    scripted.script(text("Hello there.", reasoning=THOUGHT))
    done = run("chat", "-q", "hi")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Hello there.\n"
    assert "▸ Thinking (7 words; --show-thinking shows it)" in done.stderr
    assert "greet back" not in done.stderr + done.stdout
    assert DIM not in done.stderr  # not a terminal: no escape codes

    scripted.script(text("Hello there.", reasoning=THOUGHT, reasoning_field="reasoning"))
    shown = run("chat", "-q", "hi", "--show-thinking")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout == "Hello there.\n"
    assert f"Thinking:\n{THOUGHT}\n" in shown.stderr
    assert "▸ Thinking" not in shown.stderr


def test_on_a_terminal_the_thinking_line_is_dimmed(scripted: ModelServer) -> None:
    scripted.script(text("Hello there.", reasoning=THOUGHT))
    term = Terminal("chat")
    try:
        term.expect("› ")
        term.type("hi\r")
        term.expect(f"{DIM}▸ Thinking (7 words; --show-thinking shows it)\x1b[0m")
        term.expect("Hello there.")
        term.expect("› ")
        term.type("\x04")
        assert term.close() == 0
    finally:
        if term.proc.poll() is None:
            term.proc.kill()
    assert "greet back" not in term.seen
