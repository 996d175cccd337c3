"""The config editor's save on a big config (400 servers: 200 in mcp.toml, 200 in
config.yaml) against the same save on a 1-server config, through the editor's model
(``portico.config.editing``, what the window runs in a worker thread).

Parses are counted by ``portico.config.parse_count``: a save reads each file once (the
config the app then applies as it is). Times are medians of ``RUNS`` saves each, the two
configs back to back in each run.

Run: ``python -m pytest tests/benchmarks/test_bench_editor_save.py -s``.
"""

from __future__ import annotations

import os
import statistics
import time
from pathlib import Path

import pytest

from portico import paths
from portico.config import parse_count
from portico.config.editing import EditorModel
from tests.benchmarks.test_bench_config_edit import make_config

RUNS = int(os.environ.get("PORTICO_BENCH_RUNS", "7"))


def _one_save(
    home: Path, run: int, monkeypatch: pytest.MonkeyPatch
) -> tuple[float, dict[str, int]]:
    monkeypatch.setenv("PORTICO_HOME", str(home))
    model = EditorModel(None)
    toml = model.file_for(paths.paths().global_toml)
    toml.set("t0", ("timeout",), 10000 + run)
    parse_count.reset()
    start = time.perf_counter()
    outcome = model.save()
    took = time.perf_counter() - start
    assert outcome.written and outcome.config is not None
    return took, dict(parse_count.PARSES)


def test_bench_editor_save(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    homes = {"small": tmp_path / "small", "big": tmp_path / "big"}
    make_config(homes["small"], 1)
    make_config(homes["big"], 400)
    times: dict[str, list[float]] = {"small": [], "big": []}
    parses: dict[str, dict[str, int]] = {}
    for run in range(RUNS):
        for name, home in homes.items():
            took, counted = _one_save(home, run, monkeypatch)
            times[name].append(took)
            parses[name] = counted
    small, big = statistics.median(times["small"]), statistics.median(times["big"])
    print(
        f"\neditor save, median of {RUNS}: 1 server {small * 1000:.1f} ms, "
        f"400 servers {big * 1000:.1f} ms ({big / small:.1f}x)"
    )
    for name, counted in parses.items():
        per_file = ", ".join(f"{Path(p).name} {n}" for p, n in sorted(counted.items()))
        print(f"parses per save ({name}): {per_file}")
    assert all(n == 1 for counted in parses.values() for n in counted.values())
