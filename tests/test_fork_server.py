"""tests/helpers/forkserver.py: a script run through the fork server behaves as
``python script.py`` would (arguments, environment, folder, streams, exit code), and a
killed client takes its forked child with it (a peer that gives up on its command)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.forkserver import fork_server

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the fork server forks on Linux")

SCRIPT = """\
import json, os, sys
print(json.dumps({"argv": sys.argv, "cwd": os.getcwd(), "x": os.environ.get("X"),
                  "path0": sys.path[0], "stdin": sys.stdin.read(), "pid": os.getpid()}))
print("to stderr", file=sys.stderr)
raise SystemExit(int(sys.argv[1]))
"""

SLEEPER = """\
import os, sys, time
print(os.getpid(), flush=True)
time.sleep(60)
"""


def test_a_script_runs_as_its_own_python_would(tmp_path: Path) -> None:
    script = tmp_path / "scripts" / "show.py"
    script.parent.mkdir()
    script.write_text(SCRIPT)
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    with fork_server(tmp_path, "json") as python:
        done = subprocess.run(
            [*python, str(script), "7", "--flag"],
            input="from stdin",
            capture_output=True,
            text=True,
            cwd=elsewhere,
            env={**os.environ, "X": "42"},
            timeout=30,
        )
    assert done.returncode == 7, done.stderr
    seen = json.loads(done.stdout)
    assert seen["argv"] == [str(script), "7", "--flag"]
    assert seen["cwd"] == str(elsewhere)
    assert seen["x"] == "42"
    assert seen["path0"] == str(script.parent)
    assert seen["stdin"] == "from stdin"
    assert seen["pid"] != os.getpid()
    assert done.stderr == "to stderr\n"


def test_a_killed_client_ends_its_child(tmp_path: Path) -> None:
    script = tmp_path / "sleeper.py"
    script.write_text(SLEEPER)
    with fork_server(tmp_path) as python:
        client = subprocess.Popen([*python, str(script)], stdout=subprocess.PIPE, text=True)
        assert client.stdout is not None
        child = int(client.stdout.readline())
        client.kill()
        client.wait(timeout=10)
        client.stdout.close()
        deadline = time.monotonic() + 10
        while _running(child):
            assert time.monotonic() < deadline, "the forked child outlived its client"
            time.sleep(0.02)


def _running(pid: int) -> bool:
    """Alive and not a zombie waiting for the fork server to reap it."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
