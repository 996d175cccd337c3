"""Interactive ``portico chat`` on a real pseudo-terminal: line input, Ctrl+C stops the
turn (not the program), Ctrl+D leaves; tool approvals are asked on the terminal (and
skipped with --yolo)."""

from __future__ import annotations

import codecs
import fcntl
import json
import os
import select
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from portico.paths import paths
from tests.helpers.servers import TOOLBOX
from tests.servers.model_server import ModelServer, text, tool_call

pytestmark = pytest.mark.slow  # talks to real servers or processes

REPO = Path(__file__).resolve().parents[2]


def _controlling_terminal() -> None:
    """In the child: a new session whose controlling terminal is the pty (so Ctrl+C on
    it sends SIGINT, as in a real terminal)."""
    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class Terminal:
    def __init__(self, *args: str) -> None:
        self.master, slave = os.openpty()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "portico.cli.main", *args],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            cwd=REPO,
            env={**os.environ},
            preexec_fn=_controlling_terminal,
        )
        os.close(slave)
        self.seen = ""
        self.mark = 0
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def expect(self, text: str, within: float = 60.0) -> None:
        """Wait for ``text`` to appear after what the last expect matched."""
        deadline = time.monotonic() + within
        while text not in self.seen[self.mark :]:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"did not see {text!r}; the terminal shows:\n{self.seen}")
            ready, _, _ = select.select([self.master], [], [], min(left, 0.5))
            if ready:
                try:
                    self.seen += self._decoder.decode(os.read(self.master, 65536))
                except OSError:
                    raise AssertionError(f"terminal closed; it showed:\n{self.seen}") from None
        self.mark = self.seen.index(text, self.mark) + len(text)

    def type(self, text: str) -> None:
        os.write(self.master, text.encode())

    def close(self) -> int:
        try:
            return self.proc.wait(30)
        finally:
            os.close(self.master)


def test_interactive_chat_stops_a_turn_with_ctrl_c_and_goes_on(portico_home: Path) -> None:
    with ModelServer() as server:
        server.script(
            {"text": " ".join(f"w{i}" for i in range(300)), "delay": 0.05},
            {"text": "Second answer."},
        )
        paths().global_yaml.parent.mkdir(parents=True, exist_ok=True)
        paths().global_yaml.write_text(
            "models:\n  providers:\n    scripted:\n      kind: openai\n"
            f"      base_url: {server.openai_url}\n      models: [gpt-test]\n"
        )
        term = Terminal("chat")
        try:
            term.expect("Ctrl+D leaves")
            term.expect("› ")
            term.type("tell me everything\r")
            term.expect("w20 ")
            term.type("\x03")  # Ctrl+C
            term.expect("(stopped)")
            term.expect("› ")
            term.type("and now?\r")
            term.expect("Second answer.")
            term.expect("› ")
            term.type("\x04")  # Ctrl+D
            assert term.close() == 0
        finally:
            if term.proc.poll() is None:
                term.proc.kill()
    assert "Traceback" not in term.seen


def _with_toolbox(server: ModelServer) -> None:
    """The toolbox over stdio (default trust: its echo tool asks) and the scripted model."""
    paths().global_yaml.parent.mkdir(parents=True, exist_ok=True)
    paths().global_yaml.write_text(
        "mcp_servers:\n  tb:\n"
        f"    command: {json.dumps(sys.executable)}\n"
        f"    args: [{json.dumps(str(TOOLBOX))}, stdio]\n"
        "models:\n  providers:\n    scripted:\n      kind: openai\n"
        f"      base_url: {server.openai_url}\n      models: [gpt-test]\n"
    )


def _tool_messages(server: ModelServer) -> list[str]:
    """What the model was sent back for each tool call, in order (in the last turn's
    request)."""
    turn = [r for r in server.requests if r.body.get("tools")][-1]
    return [
        json.dumps(m.get("content"), ensure_ascii=False)
        for m in turn.body["messages"]
        if m.get("role") == "tool"
    ]


def test_interactive_approval_yes_runs_the_exact_arguments_and_no_denies(
    portico_home: Path,
) -> None:
    with ModelServer() as server:
        server.script(
            tool_call("tb__echo", {"text": "exact ✓ args"}),
            text("It ran."),
            tool_call("tb__echo", {"text": "second try"}),
            text("You said no."),
        )
        _with_toolbox(server)
        term = Terminal("chat")
        try:
            term.expect("› ")
            term.type("echo something\r")
            term.expect("'tb' wants to run echo")
            term.expect('"text": "exact ✓ args"')  # the exact arguments are shown
            term.expect("[d] deny")
            term.type("o\r")  # allow once
            term.expect("← tb__echo: ok")
            term.expect("echo: exact ✓ args")  # what the server echoed
            term.expect("It ran.")
            term.expect("› ")
            assert _tool_messages(server) == ['"echo: exact ✓ args"']
            term.type("and again\r")
            term.expect("'tb' wants to run echo")  # allow once is not remembered
            term.expect('"text": "second try"')
            term.expect("[d] deny")
            term.type("d\r")
            term.expect("← tb__echo: denied")
            term.expect("You said no.")
            term.expect("› ")
            denial = _tool_messages(server)[-1]
            assert "The person denied the call to 'tb__echo'" in denial
            assert "second try" not in denial  # it never ran
            term.type("\x04")
            assert term.close() == 0
        finally:
            if term.proc.poll() is None:
                term.proc.kill()
    assert "Traceback" not in term.seen


def test_interactive_yolo_runs_tools_without_asking(portico_home: Path) -> None:
    with ModelServer() as server:
        server.script(tool_call("tb__echo", {"text": "no questions"}), text("Ran it."))
        _with_toolbox(server)
        term = Terminal("chat", "--yolo")
        try:
            term.expect("› ")
            term.type("echo something\r")
            term.expect("← tb__echo: ok")
            term.expect("Ran it.")
            term.expect("› ")
            assert _tool_messages(server) == ['"echo: no questions"']
            term.type("\x04")
            assert term.close() == 0
        finally:
            if term.proc.poll() is None:
                term.proc.kill()
    assert "wants to run" not in term.seen and "Traceback" not in term.seen
