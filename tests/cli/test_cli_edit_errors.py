"""Every CLI command on a closed stdout, and every edit command on a file that does not
parse, that this user may not write, or that has a newer format version.

Closed stdout: the command stops quietly (exit 0, 1 or 141, nothing on stderr about the
pipe, no crash log). Bad files: a clear one-line reason on stderr, the file unchanged.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from portico.cli.main import main
from portico.paths import paths

REPO = Path(__file__).resolve().parents[2]
TOOLBOX = REPO / "tests" / "servers" / "toolbox.py"

CONFIG = f"""\
# servers for the error-path suite
[mcp.box]
command = [{json.dumps(sys.executable)}, {json.dumps(str(TOOLBOX))}, "stdio"]
timeout = 30000

[mcp.docs]
url = "https://docs.example.com/mcp"
enabled = false
"""


def portico(
    *argv: str, home: Path, cwd: Path, closed_stdout: bool = False, bound_by_modes: bool = False
) -> tuple[int, str]:
    """Run ``portico ARGV`` in a child process; (exit code, stderr). ``bound_by_modes``: the
    child obeys file modes even when this process is root (see :func:`_obeying_modes`)."""
    command = [sys.executable, "-m", "portico.cli.main", *argv]
    if bound_by_modes:
        command = [*_obeying_modes(), *command]
    env = {**os.environ, "PORTICO_HOME": str(home), "HOME": str(home)}
    proc = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        cwd=cwd,
        env=env,
    )
    assert proc.stdout is not None and proc.stderr is not None
    with proc.stdout, proc.stderr:
        if closed_stdout:
            proc.stdout.close()  # the reader is gone before the command writes a byte
        else:
            proc.stdout.read()
        err = proc.stderr.read().decode("utf-8", "replace")
    return proc.wait(timeout=120), err


@pytest.fixture
def home(portico_home: Path) -> Path:
    toml = paths().global_toml
    toml.parent.mkdir(parents=True, exist_ok=True)
    toml.write_text(CONFIG, encoding="utf-8")
    return portico_home


@pytest.fixture
def import_source(tmp_path: Path) -> Path:
    source = tmp_path / "claude_desktop_config.json"
    source.write_text(
        json.dumps({"mcpServers": {"fetched": {"command": "uvx", "args": ["mcp-server-fetch"]}}})
    )
    return source


EVERY_COMMAND = [
    ["--help"],
    ["config", "show"],
    ["config", "show", "--json"],
    ["config", "check"],
    ["config", "example", "mcp"],
    ["config", "example", "mcp", "--format", "yaml"],
    ["config", "set", "box.timeout", "45000"],
    ["config", "unset", "box.timeout"],
    ["mcp", "add", "extra", "--", "npx", "-y", "pkg"],
    ["mcp", "disable", "box"],
    ["mcp", "enable", "docs"],
    ["mcp", "rename", "docs", "handbook"],
    ["mcp", "remove", "docs"],
    ["mcp", "import", "claude-desktop", "--from", "{source}"],
    ["mcp", "list", "--budget", "20"],
    ["mcp", "test", "box"],
    ["mcp", "tools", "box"],
    ["mcp", "call", "box", "echo", "--args", '{"text": "hi"}'],
]


@pytest.mark.slow
@pytest.mark.parametrize("argv", EVERY_COMMAND, ids=lambda a: " ".join(a[:3]))
def test_every_command_stops_quietly_on_a_closed_stdout(
    argv: list[str], home: Path, import_source: Path, tmp_path: Path
) -> None:
    args = [a.replace("{source}", str(import_source)) for a in argv]
    code, err = portico(*args, home=home, cwd=tmp_path, closed_stdout=True)
    assert code in (0, 141), err
    assert "BrokenPipe" not in err and "Traceback" not in err and "unexpectedly" not in err
    assert not (paths().log_dir / "cli-crash.log").exists()


# -- edit commands on bad files (in-process: the same code path, faster) -------------------

EDITS = [
    ["config", "set", "box.timeout", "45000"],
    ["config", "unset", "box.timeout"],
    ["mcp", "add", "extra", "--", "npx", "-y", "pkg"],
    ["mcp", "remove", "box"],
    ["mcp", "enable", "box"],
    ["mcp", "disable", "box"],
    ["mcp", "rename", "box", "crate"],
    ["mcp", "import", "claude-desktop", "--from", "{source}"],
]

UNPARSABLE = '[mcp.box]\ncommand = = ["x"]\n\n[mcp.docs]\nurl = "https://d"\n'
NEWER = "version = 99\n" + CONFIG


@pytest.mark.parametrize("argv", EDITS, ids=lambda a: " ".join(a[:2]))
def test_an_edit_of_an_unparsable_file_reports_the_parse_error(
    argv: list[str], home: Path, import_source: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    toml = paths().global_toml
    toml.write_text(UNPARSABLE, encoding="utf-8")
    assert main([a.replace("{source}", str(import_source)) for a in argv]) == 1
    err = capsys.readouterr().err
    assert f"{toml}:2:" in err and "not valid TOML" in err, err
    assert "no server named" not in err
    assert toml.read_text(encoding="utf-8") == UNPARSABLE


@pytest.mark.parametrize("argv", EDITS, ids=lambda a: " ".join(a[:2]))
def test_an_edit_of_a_newer_version_is_refused(
    argv: list[str], home: Path, import_source: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    toml = paths().global_toml
    toml.write_text(NEWER, encoding="utf-8")
    assert main([a.replace("{source}", str(import_source)) for a in argv]) == 1
    err = capsys.readouterr().err
    assert "version = 99 is newer than this build of Portico reads" in err, err
    assert toml.read_text(encoding="utf-8") == NEWER


# -- read-only files, in a process the mode applies to ----------------------------------------


# Root ignores a file's mode through two capabilities, not through its uid: without
# CAP_DAC_OVERRIDE (and CAP_DAC_READ_SEARCH) a root process is held to the owner's bits like
# anyone else. The child drops them (from the inheritable and bounding sets, so the exec
# cannot give them back) and stays root: it can still import a checkout under a 0700
# folder of root's, where another user could not.
_MODE_BYPASS = "-dac_override,-dac_read_search"


def _obeying_modes() -> list[str]:
    """The command prefix that makes the child obey file modes: none for a normal user."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: a 0444 file is writable to root")
    return ["setpriv", f"--inh-caps={_MODE_BYPASS}", f"--bounding-set={_MODE_BYPASS}"]


@pytest.mark.slow
@pytest.mark.parametrize("argv", EDITS, ids=lambda a: " ".join(a[:2]))
def test_an_edit_of_a_read_only_file_is_refused(argv: list[str], tmp_path: Path) -> None:
    home = tmp_path / "home"
    config = home / "config"
    config.mkdir(parents=True)  # the folder is writable: only the file's own mode protects it
    toml = config / "mcp.toml"
    toml.write_text(CONFIG, encoding="utf-8")
    toml.chmod(0o444)
    source = home / "claude_desktop_config.json"
    source.write_text(json.dumps({"mcpServers": {"fetched": {"command": "uvx"}}}))
    source.chmod(0o444)
    code, err = portico(
        *[a.replace("{source}", str(source)) for a in argv],
        home=home,
        cwd=home,
        bound_by_modes=True,
    )
    assert code == 1, err
    assert f"{toml}: read-only file; nothing was written" in err, err
    assert toml.read_text(encoding="utf-8") == CONFIG
    assert oct(toml.stat().st_mode & 0o777) == oct(0o444)
    assert sorted(p.name for p in toml.parent.iterdir()) == ["mcp.toml"]  # no temp file left
