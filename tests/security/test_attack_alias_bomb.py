"""Attack 8 (issue 21): a 553-byte YAML alias bomb in a cloned project's
``.portico/config.yaml`` grew `portico config check` to gigabytes and never finished.
Rule: every config read has parse limits (expanded size, depth, file size) and a file
over them is refused in well under a second with a line that says why; the other files
still load."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from portico.config import load
from portico.config.document import ConfigDocument
from portico.config.edit_errors import DocumentParseError
from portico.config.importers.jsonc import ImportSourceError, read_json
from portico.config.limits import MAX_DEPTH, MAX_FILE_BYTES
from tests.helpers.cli import run_cli


def _bomb(levels: int = 9, fan: int = 10) -> str:
    lines = ["a0: &a0 [" + ",".join(['"x"'] * fan) + "]"]
    for i in range(1, levels + 1):
        lines.append(f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * fan) + "]")
    lines += ["mcp_servers:", "  boom:", "    command: echo", f"    args: *a{levels}"]
    return "\n".join(lines) + "\n"


def _global_server(home: Path) -> None:
    (home / "config").mkdir(parents=True, exist_ok=True)
    (home / "config" / "mcp.toml").write_text('[mcp.mine]\ncommand = ["echo"]\n')


def test_the_bomb_is_refused_at_once_with_its_line_and_the_rest_loads(
    portico_home: Path, project: Path
) -> None:
    _global_server(portico_home)
    bomb = project / ".portico" / "config.yaml"
    bomb.write_text(_bomb(), encoding="utf-8")
    assert bomb.stat().st_size < 600
    start = time.perf_counter()
    config = load(project)
    elapsed = time.perf_counter() - start
    assert elapsed < 1.0, elapsed
    errors = [d for d in config.diagnostics if d.severity == "error" and d.path == bomb]
    assert len(errors) == 1
    assert "through its aliases" in errors[0].message
    assert errors[0].line == 6  # a6: ten aliases of a5 (~10^5 each) go over the limit
    assert [s.name for s in config.servers] == ["mine"]


def test_config_check_stays_small_and_fast(portico_home: Path, project: Path) -> None:
    """The real command in its own process: its peak memory and time stay those of a
    small config (it grew past 600 MiB in 10 s and went on before the limit)."""
    (project / ".portico" / "config.yaml").write_text(_bomb(), encoding="utf-8")
    script = (
        "import sys\n"
        "from portico.cli.main import main\n"
        "code = main(['config', 'check', '--project', sys.argv[1]])\n"
        # VmHWM, not ru_maxrss: that one keeps the forking parent's (a big test worker's)
        "print(open('/proc/self/status').read().split('VmHWM:')[1].split()[0])\n"
        "sys.exit(code)\n"
    )
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", script, str(project)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PORTICO_HOME": str(portico_home)},
    )
    elapsed = time.perf_counter() - start
    assert proc.returncode == 1, proc.stderr
    assert "config.yaml:6: expands to more than" in proc.stdout + proc.stderr
    peak_kib = int(proc.stdout.strip().splitlines()[-1])
    assert peak_kib < 200 * 1024, peak_kib
    assert elapsed < 30, elapsed  # a process start; the check itself is milliseconds


def test_an_edit_of_the_bomb_is_refused_before_its_tree_is_walked(project: Path) -> None:
    bomb = project / ".portico" / "config.yaml"
    bomb.write_text(_bomb(), encoding="utf-8")
    with pytest.raises(DocumentParseError) as caught:
        ConfigDocument.load(bomb)
    assert caught.value.line == 6
    assert "aliases" in str(caught.value)


def test_a_cli_edit_names_the_file_and_line(portico_home: Path, project: Path) -> None:
    (project / ".portico" / "config.yaml").write_text(_bomb(), encoding="utf-8")
    proc = run_cli(
        portico_home,
        "mcp",
        "add",
        "x",
        "--project",
        str(project),
        "--scope",
        "project",
        "--",
        "echo",
    )
    assert proc.returncode != 0
    assert "config.yaml:6" in proc.stderr + proc.stdout
    assert "Traceback" not in proc.stderr


def test_deep_nesting_is_refused_with_its_line(project: Path) -> None:
    deep = project / ".portico" / "config.yaml"
    for depth in (MAX_DEPTH + 1, 5000):  # over ours; over libyaml's own limit too
        deep.write_text("mcp_servers:\n  x:\n    args: " + "[" * depth + "]" * depth + "\n")
        config = load(project)
        (error,) = [d for d in config.diagnostics if d.severity == "error"]
        assert f"nests deeper than {MAX_DEPTH} levels" in error.message
        assert error.line == 3


def test_a_file_over_the_size_limit_is_refused_without_reading_it(project: Path) -> None:
    big = project / ".portico" / "mcp.toml"
    with open(big, "wb") as handle:  # sparse: its size is what the check sees
        handle.truncate(MAX_FILE_BYTES + 1)
    config = load(project)
    (error,) = [d for d in config.diagnostics if d.path == big]
    assert "a config file may hold at most 8 MiB" in error.message
    with pytest.raises(ImportSourceError, match="at most 8 MiB"):
        read_json(big)


def test_a_few_ordinary_aliases_still_work(project: Path) -> None:
    (project / ".portico" / "config.yaml").write_text(
        "base: &args ['-y', 'server']\n"
        "mcp_servers:\n"
        "  one:\n    command: npx\n    args: *args\n"
        "  two:\n    command: npx\n    args: *args\n",
        encoding="utf-8",
    )
    config = load(project)
    assert not [d for d in config.diagnostics if d.severity == "error"]
    assert [s.args for s in config.servers] == [("-y", "server"), ("-y", "server")]
