"""TerminalPrompter driven for real: answers fed on stdin (pipe) and through a pty."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # talks to real servers or processes

DRIVER = Path(__file__).with_name("terminal_driver.py")


def run(kind: str, typed: str) -> tuple[str, str]:
    proc = subprocess.run(
        [sys.executable, str(DRIVER), kind],
        input=typed,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    result = next(line for line in proc.stdout.splitlines() if "RESULT: " in line)
    return result.split("RESULT: ", 1)[1], proc.stdout


def test_trust_review_keys_and_shown_fields() -> None:
    result, out = run("trust", "x\np\n")
    assert result == "<TrustChoice.TRUST: 'trust'>"
    assert "    env API_KEY \u2190 keyring secret DOCS_KEY" in out
    assert "  trust: full (runs every tool" in out
    assert "  cost: spend limit: 5 credits per chat" in out
    assert "command: npx docs-server --port 1" in out
    assert "defined in: /p/.portico/mcp.toml:3" in out
    assert "env: API_KEY (values hidden)" in out
    assert "Please type one of: o, p, r" in out  # 'x' was not a choice
    assert run("trust", "o\n")[0] == "<TrustChoice.ONCE: 'once'>"
    assert run("trust", "r\n")[0] == "<TrustChoice.REJECT: 'reject'>"
    assert run("trust", "\n")[0] == "<TrustChoice.DECLINE: 'decline'>"
    # while DNS fails, 'p' is not offered
    result, out = run("trust-nodns", "p\no\n")
    assert result == "<TrustChoice.ONCE: 'once'>"
    assert "trust cannot be saved while DNS fails" in out


def test_tool_approval_choices_and_any_arguments() -> None:
    result, out = run("tool", "s*\n")
    assert result == (
        "ApprovalAnswer(choice=<ApprovalChoice.SESSION: 'session'>, any_arguments=True)"
    )
    assert "Costs about 20 credits." in out and '"prompt": "cat"' in out
    assert "[a*] always allow with any arguments" in out
    assert run("tool", "d\n")[0].startswith("ApprovalAnswer(choice=<ApprovalChoice.DENY")
    result, out = run("spend", "s\no\n")
    assert result == "<ApprovalChoice.ONCE: 'once'>"
    assert "[o] allow once  [d] deny" in out and "Please type one of: o, d" in out


def test_elicitation_field_by_field_with_defaults() -> None:
    # accept; name: keep default; age: bad then 36; color: red; subscribe: y
    result, out = run("form", "y\n\nold\n36\nred\ny\n")
    assert result == (
        "ElicitationAnswer(action='accept', content={'name': 'Ada', 'age': 36, "
        "'color': 'red', 'subscribe': True})"
    )
    assert "Name [Ada]: " in out and "choices: red, blue" in out
    assert run("form", "n\n")[0] == "ElicitationAnswer(action='decline', content=None)"


def test_sampling_review_edit() -> None:
    result, _out = run("sampling", "e\nsay hi\n\n20\n")
    assert "action='approve'" in result
    assert "SamplingMessage(role='user', text='say hi')" in result and "max_tokens=20" in result
    assert run("sampling", "d\n")[0] == (
        "SamplingAnswer(action='deny', messages=None, system_prompt=None, max_tokens=None)"
    )


def test_authorize_paste_back_checks_the_pasted_text() -> None:
    result, out = run("authorize", "garbage\n?code=abc&state=s1\n")
    assert result == "'?code=abc&state=s1'"
    assert "https://auth.example/authorize?client_id=x" in out
    assert "That did not work: no code= in the pasted text" in out
    assert run("authorize", "\n")[0] == "None"


def test_closed_input_refuses() -> None:
    result, _out = run("trust", "")
    assert result.startswith("Refused(") and "input was closed" in result


def test_on_a_pty_the_loop_keeps_running_while_waiting() -> None:
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, str(DRIVER), "trust"],
        stdin=slave,
        stdout=slave,
        stderr=subprocess.PIPE,
        close_fds=True,
    )
    os.close(slave)
    output = b""
    try:
        deadline = time.monotonic() + 30
        while b"> " not in output:
            assert time.monotonic() < deadline, output
            ready, _, _ = select.select([master], [], [], 0.5)
            if ready:
                output += os.read(master, 4096)
        time.sleep(0.5)  # the person thinks; the loop must keep ticking
        os.write(master, b"o\n")
        while b"TICKS:" not in output or not output.rstrip().endswith(
            output.split(b"TICKS:")[-1].rstrip()
        ):
            ready, _, _ = select.select([master], [], [], 0.5)
            if not ready:
                if proc.poll() is not None:
                    break
                continue
            try:
                chunk = os.read(master, 4096)
            except OSError:
                break
            if not chunk:
                break
            output += chunk
        proc.wait(timeout=30)
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
        assert proc.stderr is not None
        proc.stderr.close()
    text = output.decode(errors="replace")
    assert "RESULT: <TrustChoice.ONCE: 'once'>" in text
    ticks = int(text.split("TICKS:")[1].split()[0])
    assert ticks >= 10, text
