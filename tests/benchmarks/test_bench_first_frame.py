"""The window's first frame with 30 servers configured comes within 1.3x of the time with
an empty config (the servers start after the first paint; the chat and its store too).

Each run is a fresh process (``tests/ui/app_driver.py start``); the figure is the time
from the process start to the window's first paint, medians of alternating runs.

Run: ``QT_QPA_PLATFORM=offscreen python -m pytest -s tests/benchmarks/test_bench_first_frame.py``
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DRIVER = REPO / "tests" / "ui" / "app_driver.py"
TINY = REPO / "tests" / "servers" / "tiny.py"
SERVERS = 30
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "4"))


def _home(root: Path, servers: int) -> Path:
    home = root / f"home-{servers}"
    (home / "config").mkdir(parents=True)
    py, tiny = sys.executable.replace("\\", "/"), str(TINY).replace("\\", "/")
    body = "".join(
        f'[mcp.s{i}]\ncommand = ["{py}", "{tiny}", "--name", "s{i}"]\n\n' for i in range(servers)
    )
    (home / "config" / "mcp.toml").write_text(body, encoding="utf-8")
    return home


def _first_frame(home: Path) -> float:
    env = dict(os.environ, PORTICO_HOME=str(home), QT_QPA_PLATFORM="offscreen")
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, str(DRIVER), "start"], env=env, stdout=subprocess.PIPE, text=True
    )
    painted = None
    assert proc.stdout is not None
    for line in proc.stdout:
        event = json.loads(line)
        if event.get("event") == "painted" and painted is None:
            painted = time.perf_counter() - start
    proc.wait(120)
    assert painted is not None, "the window never painted"
    return painted


def test_first_frame_with_30_servers(tmp_path: Path) -> None:
    empty_home, full_home = _home(tmp_path, 0), _home(tmp_path, SERVERS)
    empty, full = [], []
    for _ in range(ROUNDS):
        empty.append(_first_frame(empty_home))
        full.append(_first_frame(full_home))
    e, f = statistics.median(empty), statistics.median(full)
    print(
        f"\nfirst frame: empty config {e * 1000:.0f} ms, {SERVERS} servers {f * 1000:.0f} ms "
        f"(ratio {f / e:.2f}, goal <= 1.3); runs {[round(x, 2) for x in empty]} / "
        f"{[round(x, 2) for x in full]}"
    )
    assert f / e <= 1.3
