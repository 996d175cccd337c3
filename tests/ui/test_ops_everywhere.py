"""Every background task of the GUI runs through ``ui/ops.py`` (``Ops.spawn`` / ``Ops.op``):
kept alive, cancelled at quit, its failure a notice. A task started by hand (its failure at
best a log line, at worst "Task exception was never retrieved") fails this check.

Not checked: ``ui/facade.py`` (the bridge between the GUI and runtime loops: its callbacks
carry results and failures to the awaiting caller) and ``ui/runtime_thread/`` (runs on the
runtime loop, where a chat turn's task reports its failure as the turn's ``TurnFailed``).
"""

from __future__ import annotations

import re
from pathlib import Path

import portico.ui

UI = Path(portico.ui.__file__).parent
EXEMPT = ("ops.py", "facade.py", "runtime_thread/")
HAND_ROLLED = re.compile(r"ensure_future\(|create_task\(|add_done_callback\(|\bops\._?keep\(")


def test_no_gui_module_keeps_tasks_by_hand() -> None:
    found = []
    for path in sorted(UI.rglob("*.py")):
        relative = path.relative_to(UI).as_posix()
        if relative.startswith(EXEMPT):
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if HAND_ROLLED.search(line):
                found.append(f"ui/{relative}:{number}: {line.strip()}")
    assert found == [], "background tasks outside ui/ops.py:\n" + "\n".join(found)
