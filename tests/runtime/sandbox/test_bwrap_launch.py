"""The bwrap launcher run for real: a process in it cannot read the person's home, write
outside what it was given, or reach a host listener; it can read what it was given."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from portico.runtime.sandbox.bwrap import BwrapPlan, BwrapUnavailable, find_bwrap


def _bwrap() -> Path:
    try:
        bwrap = find_bwrap()
    except BwrapUnavailable as exc:
        pytest.skip(f"no bwrap: {exc}")
    probe = subprocess.run(
        [str(bwrap), "--unshare-all", "--ro-bind", "/", "/", "true"], capture_output=True
    )
    if probe.returncode != 0:
        pytest.skip(f"user namespaces unavailable here: {probe.stderr.decode().strip()}")
    return bwrap


PROBE = """
import socket, sys
home, project, outside, port = sys.argv[1:5]
def attempt(label, fn):
    try:
        fn()
        print(label, "ok")
    except OSError as exc:
        print(label, "refused", type(exc).__name__)
attempt("home", lambda: open(home + "/secret.txt").read())
attempt("project", lambda: open(project + "/notes.txt").read())
attempt("write", lambda: open(outside + "/dropped.txt", "w").write("x"))
attempt("dial", lambda: socket.create_connection(("127.0.0.1", int(port)), 1).close())
"""


def test_sandboxed_process_is_refused_home_writes_and_dial(tmp_path: Path) -> None:
    bwrap = _bwrap()
    home = tmp_path / "person-home"
    home.mkdir()
    (home / "secret.txt").write_text("do not read")
    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.txt").write_text("readable")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    with listener:
        socket.create_connection(("127.0.0.1", port), 1).close()  # reachable unsandboxed
        prefix = sys.base_prefix
        plan = BwrapPlan(home=str(home), read=[str(project), prefix, sys.prefix])
        command = [sys.executable, "-c", PROBE, str(home), str(project), str(outside), str(port)]
        done = subprocess.run(plan.argv(bwrap, command), capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    lines = dict(line.split(" ", 1) for line in done.stdout.splitlines())
    assert lines["home"].startswith("refused"), done.stdout
    assert lines["project"] == "ok", done.stdout
    assert lines["write"].startswith("refused"), done.stdout
    assert lines["dial"].startswith("refused"), done.stdout
    assert not (outside / "dropped.txt").exists()


def test_a_writable_path_is_writable(tmp_path: Path) -> None:
    bwrap = _bwrap()
    work = tmp_path / "work"
    work.mkdir()
    plan = BwrapPlan(home=str(tmp_path / "home"), write=[str(work)])
    (tmp_path / "home").mkdir()
    done = subprocess.run(
        plan.argv(bwrap, ["/bin/sh", "-c", f"echo hi > {work}/out.txt"]),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    assert (work / "out.txt").read_text() == "hi\n"
