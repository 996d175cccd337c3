"""The bwrap launcher run for real: a process in it cannot read the person's home, write
outside what it was given, or reach a host listener; it can read what it was given."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

from portico.runtime.sandbox.bwrap import BwrapPlan
from tests.runtime.sandbox.targets import PROBE, need_bwrap, probe_layout, probe_results


def test_sandboxed_process_is_refused_home_writes_and_dial(tmp_path: Path) -> None:
    bwrap = need_bwrap()
    home, project, work = probe_layout(tmp_path)
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    with listener:
        socket.create_connection(("127.0.0.1", port), 1).close()  # reachable unsandboxed
        prefix = sys.base_prefix
        plan = BwrapPlan(home=str(home), read=[str(project), prefix, sys.prefix])
        command = [sys.executable, "-c", PROBE, str(home), str(project), str(work), str(port)]
        done = subprocess.run(plan.argv(bwrap, command), capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    lines = probe_results(done.stdout)
    assert lines["home"].startswith("refused"), done.stdout
    assert lines["project"] == "ok", done.stdout
    assert lines["write-work"].startswith("refused"), done.stdout
    assert lines["dial"].startswith("refused"), done.stdout
    assert not (work / "out.txt").exists()


def test_a_writable_path_is_writable(tmp_path: Path) -> None:
    bwrap = need_bwrap()
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
