"""``portico mcp list|test|tools|call`` run as real processes against real servers."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from portico.paths import paths
from tests.helpers.servers import start_toolbox, stop_server
from tests.helpers.warm import python_command

pytestmark = pytest.mark.slow  # talks to real servers or processes

REPO = Path(__file__).resolve().parents[2]
TINY = REPO / "tests" / "servers" / "tiny.py"
TOOLBOX = REPO / "tests" / "servers" / "toolbox.py"


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        python_command("-m", "portico.cli.main", *args),
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env={**os.environ},
    )


def block(name: str, *args: str, extra: str = "") -> str:
    command = json.dumps([sys.executable, str(TINY), "--name", name, *args])
    return f"[mcp.{name}]\ncommand = {command}\n{extra}\n"


@pytest.fixture
def global_config(portico_home: Path) -> Path:
    toml = paths().global_toml
    toml.parent.mkdir(parents=True, exist_ok=True)
    toml.write_text(
        block("alpha", "--tools", "2")
        + block("broken", "--exit", "4")
        + block("off", extra="enabled = false")
    )
    return toml


def test_list_json(global_config: Path, tmp_path: Path) -> None:
    out = run("mcp", "list", "--json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    rows = {r["name"]: r for r in data["servers"]}
    assert rows["alpha"]["status"] == "Running" and rows["alpha"]["tools"] == 3
    assert rows["alpha"]["transport"] == "stdio"
    assert rows["alpha"]["sandbox"] == "off"  # a global server: sandboxed only if asked
    assert rows["alpha"]["source"].startswith(f"{global_config}:1")
    assert rows["broken"]["status"] in ("Failed", "Cooldown")
    assert "server exited (code 4)" in rows["broken"]["error"]
    assert rows["off"]["status"] == "Disabled"
    assert data["summary"] == (
        "MCP: registered 3 tool(s) from 1 server(s) (1 failed: broken (server exited (code 4)))"
    )


def test_list_table_shows_awaiting_trust(global_config: Path, project: Path) -> None:
    (project / ".portico" / "mcp.toml").write_text(block("proj"))
    out = run("mcp", "list", "--project", str(project))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].split() == ["NAME", "STATUS", "TRANSPORT", "SANDBOX", "TOOLS", "SOURCE"]
    proj = next(line for line in lines if line.startswith("proj "))
    assert proj.split()[1] == "AwaitingTrust"
    # a project server: sandboxed by default, with the method this machine has
    assert proj.split()[3].startswith("sandboxed/"), proj
    alpha = next(line for line in lines if line.startswith("alpha "))
    assert alpha.split()[3] == "off"
    assert "1 awaiting trust: proj" in lines[-1]
    assert lines[-1].startswith("MCP: registered 3 tool(s) from 1 server(s)")


def test_test_name(global_config: Path, tmp_path: Path) -> None:
    ok = run("mcp", "test", "alpha", cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    assert "status:    Running" in ok.stdout
    assert "info:      alpha 1.0" in ok.stdout
    assert "protocol:  2025-11-25" in ok.stdout
    assert "  - tool_2" in ok.stdout and "timings:   connect" in ok.stdout

    bad = run("mcp", "test", "broken", cwd=tmp_path)
    assert bad.returncode == 1
    assert "server exited (code 4)" in bad.stdout
    assert "broken: exiting with 4 as asked" in bad.stdout  # the stderr tail
    assert bad.stdout.count("broken: exiting with 4 as asked") == 1, bad.stdout  # said once

    missing = run("mcp", "test", "nope", cwd=tmp_path)
    assert missing.returncode == 2 and "no server named 'nope'" in missing.stderr


PEEK = (
    "import runpy, sys\n"
    "try:\n"
    "    open(sys.argv[1]).read()\n"
    "except OSError as exc:\n"
    "    print(f'cannot read the notes: {exc}', file=sys.stderr)\n"
    "sys.argv = [sys.argv[2], '--name', 'peek']\n"
    "runpy.run_path(sys.argv[0], run_name='__main__')\n"
)


def test_test_reports_the_sandbox_and_what_it_blocked(portico_home: Path, tmp_path: Path) -> None:
    from tests.runtime.sandbox.targets import need_bwrap

    need_bwrap()
    notes = tmp_path / "private" / "notes.txt"
    notes.parent.mkdir()
    notes.write_text("private")
    toml = paths().global_toml
    toml.parent.mkdir(parents=True, exist_ok=True)
    command = json.dumps([sys.executable, "-c", PEEK, str(notes), str(TINY)])
    toml.write_text(f"[mcp.peek]\ncommand = {command}\nsandbox = {{ enabled = true }}\n")
    out = run("mcp", "test", "peek", cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "sandbox:   sandboxed: the system read-only" in out.stdout
    assert "may reach: no network" in out.stdout
    blocked = out.stdout.split("sandbox may have blocked", 1)[1]
    assert f"cannot read the notes: [Errno 2] No such file or directory: '{notes}'" in blocked
    # with the sandbox off it reads the file: nothing to report
    toml.write_text(f"[mcp.peek]\ncommand = {command}\n")
    out = run("mcp", "test", "peek", cwd=tmp_path)
    assert out.returncode == 0 and "sandbox may have blocked" not in out.stdout, out.stdout
    assert "sandbox:   no sandbox: it runs with all of your rights" in out.stdout


@pytest.fixture
def toolbox_url() -> Iterator[str]:
    server = start_toolbox("http")
    yield server.url
    stop_server(server)


def test_test_url(toolbox_url: str, tmp_path: Path) -> None:
    ok = run("mcp", "test", "--url", toolbox_url, "--header", "X-Test=1", cwd=tmp_path)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "info:      toolbox" in ok.stdout
    assert "  - echo" in ok.stdout
    assert "prompts:   1" in ok.stdout and "  - greet" in ok.stdout
    assert "  - toolbox://readme" in ok.stdout

    wrong_path = toolbox_url.replace("/mcp", "/nope")
    missing = run("mcp", "test", "--url", wrong_path, cwd=tmp_path)
    assert missing.returncode == 1
    assert f"HTTP 404 from POST {wrong_path}" in missing.stdout

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed = sock.getsockname()[1]
    bad = run("mcp", "test", "--url", f"http://127.0.0.1:{closed}/mcp", cwd=tmp_path)
    assert bad.returncode == 1
    assert "error:" in bad.stdout and str(closed) in bad.stdout


def test_tools_and_call(global_config: Path, tmp_path: Path) -> None:
    out = run("mcp", "tools", "alpha", "--json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert [t["name"] for t in data["tools"]] == ["alpha__echo", "alpha__tool_1", "alpha__tool_2"]
    assert len(data["tools"][0]["digest"]) == 64

    call = run("mcp", "call", "alpha", "echo", "--args", '{"text": "hello there"}', cwd=tmp_path)
    assert call.returncode == 0, call.stderr
    assert call.stdout.strip() == "hello there"

    wrong = run("mcp", "call", "alpha", "nosuch", cwd=tmp_path)
    assert wrong.returncode == 2 and "offers no tool 'nosuch'" in wrong.stderr
    bad_json = run("mcp", "call", "alpha", "echo", "--args", "{oops", cwd=tmp_path)
    assert bad_json.returncode == 2 and "--args is not valid JSON" in bad_json.stderr
