"""``portico mcp list`` and ``mcp test`` (real processes) say how this machine sandboxes
a server (bwrap, landlock, or none and why) before it has started: a lazy server and a
project server awaiting trust show it too. ``mcp test`` names a host the sandbox's proxy
refused, with the entry that would allow it. ``PORTICO_SANDBOX_METHODS`` picks the
method, and ``PORTICO_LANDLOCK_ABI_MAX=0`` plays a kernel without Landlock."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from portico.paths import paths
from portico.runtime.sandbox.landlock import ABI_CAP_ENV
from portico.runtime.sandbox.probe import METHODS_ENV
from tests.runtime.conftest import REPO
from tests.runtime.sandbox.targets import need_bwrap, need_landlock

pytestmark = pytest.mark.slow

TINY = REPO / "tests" / "servers" / "tiny.py"


def run(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "portico.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env={**os.environ, **env},
    )


def _configs(project: Path, *, lazy: bool = False) -> None:
    """A global server with its sandbox on, one without, and a project server (awaiting
    trust). ``lazy``: the sandboxed one is lazy (started only to learn its tools) and
    there is no project server (whose review would ask how it is sandboxed)."""
    command = json.dumps([sys.executable, str(TINY), "--name", "x"])
    toml = paths().global_toml
    toml.parent.mkdir(parents=True, exist_ok=True)
    toml.write_text(
        f"[mcp.boxed]\ncommand = {command}\nsandbox = {{ enabled = true }}\n"
        + ("lazy = true\n" if lazy else "")
        + f"\n[mcp.open]\ncommand = {command}\n"
    )
    if not lazy:
        (project / ".portico" / "mcp.toml").write_text(f"[mcp.proj]\ncommand = {command}\n")


def _cells(stdout: str) -> dict[str, str]:
    """NAME -> SANDBOX cell of the table."""
    rows = [line.split() for line in stdout.splitlines()]
    return {row[0]: row[3] for row in rows if len(row) >= 6 and row[0] != "NAME"}


@pytest.mark.parametrize("method", ["bwrap", "landlock"])
def test_list_names_the_method_before_a_server_starts(
    portico_home: Path, project: Path, method: str
) -> None:
    if method == "bwrap":
        need_bwrap()
    else:
        need_landlock(4)
    _configs(project, lazy=True)
    wanted = {METHODS_ENV: method}
    out = run("mcp", "list", cwd=project, **wanted)
    assert out.returncode == 0, out.stderr
    cells = _cells(out.stdout)
    assert cells["boxed"] == f"sandboxed/{method}", out.stdout
    assert cells["open"] == "off", out.stdout
    notes = [line for line in out.stdout.splitlines() if line.startswith("sandbox: ")]
    assert len(notes) == 1, out.stdout  # said once, under the table
    if method == "bwrap":
        assert notes[0].startswith("sandbox: bwrap ("), notes
    else:
        assert notes[0].startswith("sandbox: landlock (ABI "), notes
        assert f"as {METHODS_ENV} asks" in notes[0], notes
    # the lazy server started once to learn its tools; now they are cached and it stays
    # unstarted: the method is the list's own asking
    listed = run("mcp", "list", "--json", cwd=project, **wanted)
    rows = {r["name"]: r for r in json.loads(listed.stdout)["servers"]}
    assert rows["boxed"]["status"] == "Lazy", rows
    assert rows["boxed"]["sandbox"] == "sandboxed"
    assert rows["boxed"]["sandbox_method"] == method
    assert rows["boxed"]["sandbox_why"] == notes[0].removeprefix("sandbox: ")
    assert rows["open"]["sandbox_method"] == "" and rows["open"]["sandbox_why"] == ""


def test_list_says_when_this_machine_cannot_sandbox_and_why(
    portico_home: Path, project: Path
) -> None:
    _configs(project)
    no_landlock = {METHODS_ENV: "landlock", ABI_CAP_ENV: "0"}
    out = run("mcp", "list", "--project", str(project), cwd=project, **no_landlock)
    assert out.returncode == 0, out.stderr
    cells = _cells(out.stdout)
    assert cells["boxed"] == "sandboxed/none", out.stdout
    assert cells["proj"] == "sandboxed/none", out.stdout  # awaiting trust: not started
    assert cells["open"] == "off", out.stdout
    assert (
        "sandbox: none: this kernel has no Landlock (Linux 5.13 or later, enabled); "
        "a server to be sandboxed runs only once you agree"
    ) in out.stdout, out.stdout


def test_test_names_the_method(portico_home: Path, project: Path) -> None:
    need_landlock(4)
    _configs(project)
    out = run("mcp", "test", "boxed", cwd=project, **{METHODS_ENV: "landlock"})
    assert out.returncode == 0, out.stdout + out.stderr
    assert "sandbox:   sandboxed with Landlock" in out.stdout, out.stdout
    assert "           method: landlock (ABI " in out.stdout, out.stdout


# dials an undeclared host through the sandbox's proxy at start, then serves as tiny.py
DIALLER = (
    "import os, runpy, sys, urllib.request\n"
    "try:\n"
    "    urllib.request.urlopen(sys.argv[1], timeout=10).read()\n"
    "except OSError as exc:\n"
    "    print(f'cannot fetch the tracker: {exc}', file=sys.stderr)\n"
    "sys.argv = [sys.argv[2], '--name', 'dialler']\n"
    "runpy.run_path(sys.argv[0], run_name='__main__')\n"
)


@pytest.mark.parametrize("method", ["bwrap", "landlock"])
def test_test_reports_a_host_the_sandbox_refused(
    portico_home: Path, tmp_path: Path, method: str
) -> None:
    if method == "bwrap":
        need_bwrap()
    else:
        need_landlock(4)
    command = json.dumps([sys.executable, "-c", DIALLER, "http://127.0.0.3:9/track", str(TINY)])
    toml = paths().global_toml
    toml.parent.mkdir(parents=True, exist_ok=True)
    toml.write_text(
        f"[mcp.dialler]\ncommand = {command}\n"
        'sandbox = { enabled = true, network = { allow = ["127.0.0.2:9"] } }\n'
    )
    out = run("mcp", "test", "dialler", cwd=tmp_path, **{METHODS_ENV: method})
    assert out.returncode == 0, out.stdout + out.stderr
    assert "may reach: 127.0.0.2:9" in out.stdout, out.stdout
    blocked = out.stdout.split("sandbox may have blocked", 1)[1]
    assert blocked.startswith(" (its log says; widen sandbox.read, write or network.allow)")
    refusal = "sandbox: refused a connection to 127.0.0.3:9 (not in dialler.sandbox.network.allow)"
    assert refusal in blocked, out.stdout
    assert "add '127.0.0.3:9' there" in blocked, out.stdout
