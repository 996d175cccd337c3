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
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from tests.helpers import warm
from tests.helpers.forkserver import fork_server
from tests.helpers.servers import TOOLBOX, start_toolbox, stop_server

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


WHO = """\
import json, os, sys
if __name__ == "__main__":
    print(json.dumps({"argv0": sys.argv[0], "path0": sys.path[0], "ppid": os.getppid()}))
"""

TERMED = """\
import signal, sys, time
def on_term(signum, frame):
    print("got", signum, flush=True)
    raise SystemExit(5)
signal.signal(signal.SIGTERM, on_term)
print("ready", flush=True)
time.sleep(60)
"""


def _who(done: subprocess.CompletedProcess[str]) -> dict[str, object]:
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


def test_a_module_runs_as_python_m_would(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "who.py").write_text(WHO)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))  # the server's and the client's
    with fork_server(tmp_path, "json", "pkg.who") as python:
        done = subprocess.run(
            [*python, "-m", "pkg.who"], capture_output=True, text=True, cwd=tmp_path, timeout=30
        )
    seen = _who(done)
    assert seen["argv0"] == str(package / "who.py")
    assert seen["path0"] == str(tmp_path)
    assert seen["ppid"] != os.getpid()  # forked by the server, not run by the client
    assert done.stderr == ""  # no runpy warning for a module the server preloaded


def test_the_childs_signal_and_the_callers_signal_cross_over(tmp_path: Path) -> None:
    script = tmp_path / "termed.py"
    script.write_text(TERMED)
    with fork_server(tmp_path) as python:
        client = subprocess.Popen([*python, str(script)], stdout=subprocess.PIPE, text=True)
        assert client.stdout is not None
        assert client.stdout.readline() == "ready\n"
        client.terminate()  # passed on: the child's handler runs and chooses the code
        assert client.stdout.readline() == "got 15\n"
        assert client.wait(timeout=10) == 5
        client.stdout.close()

        sleeper = tmp_path / "sleeper.py"
        sleeper.write_text(SLEEPER)
        client = subprocess.Popen([*python, str(sleeper)], stdout=subprocess.PIPE, text=True)
        assert client.stdout is not None
        child = int(client.stdout.readline())
        os.kill(child, 9)  # the child dies of a signal: so does its client
        assert client.wait(timeout=10) == -9
        client.stdout.close()


def test_a_caller_the_server_cannot_stand_for_runs_the_command_itself(tmp_path: Path) -> None:
    """Another PYTHONPATH (other code), or a sandboxed caller (no_new_privs, as bwrap and
    Portico's Landlock launcher set): refused, and the client runs the script plainly."""
    script = tmp_path / "who.py"
    script.write_text(WHO)
    with fork_server(tmp_path, "json") as python:
        elsewhere = subprocess.run(
            [*python, str(script)],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": str(tmp_path)},
            timeout=30,
        )
        sandboxed = subprocess.run(
            [*python, str(script)],
            capture_output=True,
            text=True,
            preexec_fn=_no_new_privs,
            timeout=30,
        )
        warm = subprocess.run([*python, str(script)], capture_output=True, text=True, timeout=30)
    assert _who(elsewhere)["ppid"] == os.getpid()  # exec'd in place: the test's own child
    assert _who(sandboxed)["ppid"] == os.getpid()
    assert _who(warm)["ppid"] != os.getpid()  # the control: forked by the server


def _no_new_privs() -> None:
    import ctypes

    pr_set_no_new_privs = 38
    assert ctypes.CDLL(None).prctl(pr_set_no_new_privs, 1, 0, 0, 0) == 0


@pytest.mark.skipif(not warm.wanted(), reason="PORTICO_TEST_FORKSERVER=0")
async def test_a_stdio_test_server_is_forked_warm_and_a_port_server_is_not() -> None:
    """tests/servers/warm_start.py, with the session's fork server: a stdio server runs
    as a child of the fork server; one on a port runs in the process the test started."""
    params = StdioServerParameters(command=sys.executable, args=[str(TOOLBOX), "stdio"])
    async with Client(params, mode="legacy") as client:
        stdio_pid = int((await client.call_tool("pid", {})).content[0].text)  # type: ignore[union-attr]
        assert _parent_of(stdio_pid) != os.getpid()
    server = start_toolbox("http")
    try:
        async with Client(streamable_http_client(server.url), mode="legacy") as client:
            http_pid = int((await client.call_tool("pid", {})).content[0].text)  # type: ignore[union-attr]
    finally:
        stop_server(server)
    assert http_pid == server.proc.pid


def _parent_of(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("PPid:"):
            return int(line.split()[1])
    raise AssertionError(f"no PPid for {pid}")
