"""Launch to first window of the installed app: cold vs warm, and where the time goes.

Needs the Debian package installed (``installers/check`` builds and installs it, then runs
this) plus Xvfb and xdotool; root to drop the page cache for the cold runs.

    python -m pytest tests/benchmarks/test_bench_launch.py -s

Compared in the same run, on the same X server:
- cold: the page cache dropped (as after a reboot, or a first launch after installing);
- warm: straight after another launch;
- no bytecode: warm cache, but Python ignores the packaged __pycache__ and compiles every
  module from source (what a read-only install without bytecode does at every launch);
- the phases inside one process (launch_probe.py), cold and warm.
Target (issue 14): cold < 1.5 s on the 2-core machine. The assertions are ratios.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "installers"))
from launch_timing import Xvfb, drop_caches, launch  # noqa: E402

LAUNCHER = Path(os.environ.get("PORTICO_LAUNCHER", "/usr/bin/portico-desktop"))
PREFIX = "/usr/lib/portico"
PROBE = Path(__file__).with_name("launch_probe.py")
PYTHON = "/usr/bin/python3"
ROUNDS = int(os.environ.get("PORTICO_BENCH_ROUNDS", "3"))


def _installed() -> bool:
    return LAUNCHER.is_file() and (Path(PREFIX) / "app" / "portico").is_dir()


pytestmark = pytest.mark.skipif(
    not (_installed() and shutil.which("Xvfb") and shutil.which("xdotool")),
    reason="needs the installed package (installers/check), Xvfb and xdotool",
)


def _probe(display: str) -> dict[str, float]:
    code = (
        "import runpy, sys; "
        f"sys.path[:0] = ['{PREFIX}/app', '{PREFIX}/app_packages']; "
        f"sys.argv = ['portico-desktop']; runpy.run_path('{PROBE}', run_name='__main__')"
    )
    env = dict(os.environ, DISPLAY=display, QT_QPA_PLATFORM="xcb")
    env["PORTICO_HOME"] = tempfile.mkdtemp(prefix="portico-probe-")
    proc = subprocess.run(
        [PYTHON, "-I", "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    line = next(line for line in proc.stdout.splitlines() if line.startswith("{"))
    return json.loads(line)


def _median(values: list[float]) -> float:
    return statistics.median(values)


def test_launch_to_first_window_cold_vs_warm() -> None:
    can_drop = drop_caches()
    cold: list[float] = []
    warm: list[float] = []
    source: list[float] = []
    phases_cold: list[dict[str, float]] = []
    phases_warm: list[dict[str, float]] = []
    with Xvfb() as display:
        launch([str(LAUNCHER)], display)  # the first launch after installing, untimed
        for _ in range(ROUNDS):
            if can_drop:
                drop_caches()
            cold.append(launch([str(LAUNCHER)], display)[0])
            warm.append(launch([str(LAUNCHER)], display)[0])
            with tempfile.TemporaryDirectory() as cache:
                command = [PYTHON, "-I", "-X", f"pycache_prefix={cache}", str(LAUNCHER)]
                source.append(launch(command, display)[0])
            if can_drop:
                drop_caches()
            phases_cold.append(_probe(display))
            phases_warm.append(_probe(display))
    c, w, s = _median(cold), _median(warm), _median(source)
    print()
    print(f"launch to first window, median of {ROUNDS} (load {os.getloadavg()[0]:.1f}):")
    label = "cold (page cache dropped)" if can_drop else "cold (cache NOT dropped: not root)"
    print(f"  {label:<40} {c:6.3f} s   {[round(x, 3) for x in cold]}")
    print(f"  {'warm':<40} {w:6.3f} s   {[round(x, 3) for x in warm]}")
    print(f"  {'warm, no packaged bytecode':<40} {s:6.3f} s   {[round(x, 3) for x in source]}")
    print(f"  cold / warm = {c / w:.2f}    no bytecode / warm = {s / w:.2f}")
    print("phases inside the process (s since the process started; median cold | warm):")
    for name in phases_warm[0]:
        pc = _median([p[name] for p in phases_cold])
        pw = _median([p[name] for p in phases_warm])
        print(f"  {name:<20} {pc:6.3f} | {pw:6.3f}")
    # Compiling from source must cost far more than loading packaged bytecode, and a cold
    # page cache must not multiply the launch (it did 20x before: 7-9 s against 0.34 s).
    assert s / w > 1.3
    assert c / w < 4.0
