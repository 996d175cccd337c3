"""Launch to the first paint and to a usable chat, with the chat pane and the first-run
flows deferred past the first paint (the app) against imported before it (the baseline,
``launch_probe.py --eager``: the order the app had before), in the same run.

Each launch is a fresh process of the venv's app (``tests/benchmarks/launch_probe.py``,
offscreen). Printed, as medians of alternating runs:
- wall time from the process start to the first paint and to the Chats place being built;
- CPU time at both moments (does not depend on how loaded the shared machine is);
- the longest the GUI loop stalled between the two (input waits that long);
- ``python -X importtime``: the imports finished before the first paint (sum of the
  top-level cumulative figures), and their share of everything imported until chat-ready.

Run: ``python -m pytest -s tests/benchmarks/test_bench_launch_phases.py``
The assertions are ratios of CPU time and of import time: the deferred launch must reach
its first paint with well under the baseline's work.
"""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

PROBE = Path(__file__).with_name("launch_probe.py")
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
MARKER = "portico-probe: first paint"
IMPORT_LINE = re.compile(r"^import time:\s+\d+ \|\s+(\d+) \| (\s*)(\S+)$")


def _env(home: Path) -> dict[str, str]:
    env = dict(os.environ, PORTICO_HOME=str(home), QT_QPA_PLATFORM="offscreen")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _launch(home: Path, eager: bool, *flags: str) -> tuple[dict[str, float], str]:
    command = [sys.executable, *flags, str(PROBE)] + (["--eager"] if eager else [])
    proc = subprocess.run(command, env=_env(home), capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = next(x for x in proc.stdout.splitlines() if x.startswith("{"))
    return json.loads(line), proc.stderr


def _import_split(stderr: str) -> tuple[float, float]:
    """(seconds of top-level imports before the first paint, after it until chat-ready)."""
    before = after = 0
    painted = False
    for line in stderr.splitlines():
        if line.startswith(MARKER):
            painted = True
            continue
        match = IMPORT_LINE.match(line)
        if match and not match.group(2):  # top level: its cumulative covers its children
            if painted:
                after += int(match.group(1))
            else:
                before += int(match.group(1))
    return before / 1e6, after / 1e6


def _median(values: list[float]) -> float:
    return statistics.median(values)


def test_first_paint_without_the_chat_imports(tmp_path: Path) -> None:
    runs: dict[bool, list[dict[str, float]]] = {False: [], True: []}
    imports: dict[bool, list[tuple[float, float]]] = {False: [], True: []}
    _launch(tmp_path / "warm-up", False)  # bytecode written, page cache warm
    for index in range(ROUNDS):
        for eager in (True, False):
            home = tmp_path / f"{index}-{eager}"
            runs[eager].append(_launch(home, eager)[0])
            imports[eager].append(_import_split(_launch(home, eager, "-X", "importtime")[1]))

    def figure(eager: bool, key: str) -> float:
        return _median([r[key] for r in runs[eager]])

    load = os.getloadavg()[0]
    print(f"\nlaunch, median of {ROUNDS} (load {load:.1f}); baseline = chat imported first")
    print(f"  {'':<34} {'baseline':>9} {'deferred':>9} {'ratio':>6}")
    rows = ("first paint", "first paint cpu", "chats ready", "chats ready cpu", "longest stall")
    for key in rows:
        b, d = figure(True, key), figure(False, key)
        print(f"  {key + ' (s)':<34} {b:9.3f} {d:9.3f} {d / b:6.2f}")
    shares: dict[bool, tuple[float, float, float]] = {}
    for eager in (True, False):
        before = _median([i[0] for i in imports[eager]])
        after = _median([i[1] for i in imports[eager]])
        shares[eager] = (before, after, before / (before + after))
    b_before, d_before = shares[True][0], shares[False][0]
    print(
        f"  {'imports before first paint (s)':<34} {b_before:9.3f} {d_before:9.3f} "
        f"{d_before / b_before:6.2f}"
    )
    print(
        f"  {'imports after it, to chat-ready (s)':<34} {shares[True][1]:9.3f} "
        f"{shares[False][1]:9.3f}"
    )
    print(
        f"  {'share of imports before the paint':<34} {shares[True][2]:9.0%} "
        f"{shares[False][2]:9.0%}"
    )
    paint_cpu = figure(False, "first paint cpu") / figure(True, "first paint cpu")
    assert paint_cpu < 0.8, f"first paint costs {paint_cpu:.2f} of the baseline's CPU time"
    assert d_before / b_before < 0.7
    # Deferring must not make the chat itself later by more than the hand-over costs.
    assert figure(False, "chats ready cpu") / figure(True, "chats ready cpu") < 1.25
    # The imports after the paint run beside the GUI loop, not in it: input never waits
    # for most of them (imported on the GUI thread, the stall would be all of them).
    stall = [r["longest stall"] / (r["chats ready"] - r["first paint"]) for r in runs[False]]
    print(f"  longest stall / (chat-ready - first paint): {[round(x, 2) for x in stall]}")
    assert _median(stall) < 0.5
