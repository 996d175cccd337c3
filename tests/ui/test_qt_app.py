"""The app starts in a subprocess: window painted before mcp and the chat pane load; one
instance per user."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # talks to real servers or processes

DRIVER = Path(__file__).with_name("app_driver.py")


def _env(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PORTICO_HOME"] = str(home)
    env["QT_QPA_PLATFORM"] = "offscreen"
    return env


def _events(stdout: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]


def test_window_paints_before_mcp_and_the_chat_are_imported(portico_home: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(DRIVER), "start"],
        env=_env(portico_home),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    events = _events(proc.stdout)
    kinds = [e["event"] for e in events]
    assert kinds == ["painted", "chats", "runtime", "applied", "exit"], proc.stdout
    assert events[0] == {
        "event": "painted",
        "mcp_loaded": False,
        "visible": True,
        "deferred_loaded": [],  # the chat pane, the onboarding, the pages: after the paint
        "chats_built": False,  # the Chats place showed its placeholder
    }
    assert events[1] == {"event": "chats", "place": "ChatsPlace"}
    assert events[2]["mcp_loaded"] is True  # imported afterwards, on the runtime thread
    assert events[-1] == {"event": "exit", "rc": 0, "runtime_alive": False}


def test_second_instance_raises_the_first(portico_home: Path) -> None:
    env = _env(portico_home)
    first = subprocess.Popen(
        [sys.executable, str(DRIVER), "wait-raise"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert first.stdout is not None
        for line in first.stdout:  # blocks until the first instance is up
            if '"ready"' in line:
                break
        else:
            raise AssertionError(f"first instance never got ready: {first.stderr.read()}")
        # `portico` without arguments opens the app: here it finds the first one running.
        second = subprocess.run(
            [sys.executable, "-m", "portico.cli.main"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert second.returncode == 0, second.stderr[-2000:]
        out, err = first.communicate(timeout=60)
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    assert first.returncode == 0, err[-3000:]
    events = _events(out)
    assert {"event": "raised", "visible": True} in events
    assert events[-1]["event"] == "exit"


def test_sigterm_stops_the_app_cleanly(portico_home: Path) -> None:
    first = subprocess.Popen(
        [sys.executable, str(DRIVER), "wait-raise"],
        env=_env(portico_home),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert first.stdout is not None
        for line in first.stdout:
            if '"ready"' in line:
                break
        first.send_signal(signal.SIGTERM)
        out, err = first.communicate(timeout=60)
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    assert first.returncode == 0, err[-3000:]
    assert _events(out)[-1] == {"event": "exit", "rc": 0, "runtime_alive": False}
