"""What MCP Apps cost a person who never sees a view (the issue: RSS unchanged, <= +5 MiB).

The web engine is never loaded then (tests/ui/views/test_no_view_no_engine.py: no
QtWebEngine module, no engine process). What remains is Portico's own views code the app
imports with a view-capable server connected and its Try it pane built. This run finds
those modules with the real app (no_view_driver.py), then, in a fresh interpreter that has
the app, the runtime and the SDK imported and a QApplication made (the baseline, in the
same run), imports them and measures the process's unique memory (USS) before and after.

Run: ``QT_QPA_PLATFORM=offscreen python -m pytest -s tests/benchmarks/test_bench_no_view_memory.py``
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.ui.pages_helpers import write_global
from tests.ui.views.test_no_view_no_engine import DRIVER, VIEWER

MEASURE = """
import gc, importlib, json, sys
import psutil
from PySide6.QtWidgets import QApplication
import portico.ui.app, portico.runtime.hub, portico.services, mcp.client.session
app = QApplication([])
def uss():
    gc.collect()
    return psutil.Process().memory_full_info().uss
before = uss()
for name in json.loads(sys.argv[1]):
    importlib.import_module(name)
after = uss()
print(json.dumps({"before": before, "after": after}))
"""


def test_views_code_without_a_view_costs_under_5_mib(portico_home: Path) -> None:
    command = json.dumps([sys.executable, str(VIEWER)])
    write_global(f"[mcp.viewer]\ncommand = {command}\ntrust = 'full'\n")
    env = {**os.environ, "PORTICO_HOME": str(portico_home), "QT_QPA_PLATFORM": "offscreen"}
    run = subprocess.run(
        [sys.executable, str(DRIVER)], env=env, capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr[-3000:]
    [facts] = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
    modules = facts["apps_modules"]
    assert facts["engine_modules"] == [] and facts["engine_processes"] == 0
    measured = subprocess.run(
        [sys.executable, "-c", MEASURE, json.dumps(modules)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    figures = json.loads(measured.stdout.strip().splitlines()[-1])
    delta = (figures["after"] - figures["before"]) / 2**20
    load = os.getloadavg()
    print(
        f"\nno view shown: {len(modules)} MCP Apps modules loaded ({', '.join(modules)}),"
        f" +{delta:.2f} MiB USS over {figures['before'] / 2**20:.0f} MiB; web engine modules 0,"
        f" engine processes 0; load {load[0]:.2f}"
    )
    assert delta <= 5.0
