"""Config edits on a big config: ``config set``, ``mcp disable``, ``mcp add`` on 400 servers
(200 in mcp.toml, 200 in config.yaml) against the same command on a 1-server config.

Wall and CPU time are the whole ``portico`` process (start-up included); the two configs
run back to back and the ratio is the median of the pairs' ratios, so a drift of the
machine's speed hits both sides (CPU time is the steadier figure on a loaded machine).
Parses are counted by ``portico.config.parse_count`` in the real code path (in-process
runs of the same commands): the goal is one full parse per file the edit touches.

Run: ``python -m pytest tests/benchmarks/test_bench_config_edit.py -s``.
Goals (printed, not asserted): wall ratio <= 1.3; parses per edit = 1 per file touched.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pytest

from portico.cli.main import main
from portico.config import parse_count

RUNS = int(os.environ.get("PORTICO_BENCH_RUNS", "7"))


def make_config(home: Path, servers: int) -> None:
    config = home / "config"
    config.mkdir(parents=True, exist_ok=True)
    toml = ["# my servers\n"]
    half = max(1, servers // 2)
    for i in range(half):
        toml.append(
            f'\n# server {i}\n[mcp.t{i}]\ncommand = ["npx", "-y", "pkg-{i}"]  # launcher\n'
            f'environment = {{ A = "x" }}\ntimeout = 30000\n'
        )
    (config / "mcp.toml").write_text("".join(toml))
    if servers > 1:
        yaml = ["# yaml servers\nmcp_servers:\n"]
        for i in range(servers // 2):
            yaml.append(
                f"  # server {i}\n  y{i}:\n    command: npx\n    args: [-y, pkg-{i}]\n"
                f"    env:\n      A: x\n    timeout: 30\n\n"
            )
        (config / "config.yaml").write_text("".join(yaml))


def commands(big: bool, run: int) -> dict[str, list[str]]:
    """Each benchmarked command; values change every run so each one writes."""
    yaml_target = "y5" if big else "t0"
    return {
        "config set (mcp.toml)": ["config", "set", "t0.timeout", str(10000 + run)],
        "config set (config.yaml)": ["config", "set", f"{yaml_target}.timeout", str(10 + run)]
        if big
        else ["config", "set", "t0.timeout", str(20000 + run)],
        "mcp disable (mcp.toml)": ["mcp", "disable" if run % 2 == 0 else "enable", "t0"],
        "mcp disable (config.yaml)": ["mcp", "disable" if run % 2 == 0 else "enable", yaml_target],
        "mcp add": ["mcp", "add", f"new{run}", "--", "npx", "-y", "pkg"],
    }


def wall(home: Path, argv: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one ``portico`` process."""
    env = {**os.environ, "PORTICO_HOME": str(home)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "portico.cli.main", *argv],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    took = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert done.returncode == 0, done.stderr
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return took, cpu


def parses(
    home: Path, argv: list[str], monkeypatch: pytest.MonkeyPatch
) -> tuple[dict[str, int], dict[str, int]]:
    """(full parses, parses of one server's lines) per file name, of one in-process run."""
    monkeypatch.setenv("PORTICO_HOME", str(home))
    parse_count.reset()
    assert main(argv) == 0
    return (
        {Path(p).name: n for p, n in parse_count.PARSES.items()},
        {Path(p).name: n for p, n in parse_count.SPANS.items()},
    )


def test_edit_commands_scale_with_the_edit_not_the_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    small, big = tmp_path / "one", tmp_path / "four-hundred"
    make_config(small, 1)
    make_config(big, 400)
    names = list(commands(True, 0))
    # per pair (1 server, then 400, back to back): wall and CPU of each, and their ratios
    pairs: dict[str, list[tuple[float, float, float, float]]] = {n: [] for n in names}
    for run in range(RUNS + 1):  # the first round warms the file cache; not counted
        for name in names:
            one_wall, one_cpu = wall(small, commands(False, run)[name])
            many_wall, many_cpu = wall(big, commands(True, run)[name])
            if run:
                pairs[name].append((one_wall, many_wall, one_cpu, many_cpu))
    print()
    print(
        f"{'command':27} {'1 server':>9} {'400':>8} {'wall x':>7} {'cpu x':>6}"
        "   full parses per file (400 servers)"
    )
    for name in names:
        rows = pairs[name]
        one = statistics.median(r[0] for r in rows)
        many = statistics.median(r[1] for r in rows)
        wall_ratio = statistics.median(r[1] / r[0] for r in rows)
        cpu_ratio = statistics.median(r[3] / r[2] for r in rows)
        counted, spans = parses(big, commands(True, RUNS + 1)[name], monkeypatch)
        print(
            f"{name:27} {one * 1000:7.0f}ms {many * 1000:6.0f}ms {wall_ratio:7.2f} "
            f"{cpu_ratio:6.2f}   {counted} (+ one server's lines: {spans})"
        )
        # one full parse of each file the edit touches (a big file: the fast whole-file
        # check; the edited server's own lines get the round-trip parse)
        assert all(n == 1 for n in counted.values()), counted
