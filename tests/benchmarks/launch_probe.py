"""Where a launch's time goes, phase by phase, inside one real app process.

python launch_probe.py  (with portico importable; QT_QPA_PLATFORM and DISPLAY as wanted)
prints one JSON line: seconds since the process started for each phase, ending at the
main window's first paint, then quits the app cleanly.
"""

from __future__ import annotations

import json
import os
import sys
import time

T0 = time.perf_counter()


def process_age() -> float:
    """Seconds since this process was created (interpreter start-up included)."""
    with open("/proc/self/stat", encoding="ascii") as handle:
        start_ticks = int(handle.read().rsplit(")", 1)[1].split()[19])
    with open("/proc/uptime", encoding="ascii") as handle:
        uptime = float(handle.read().split()[0])
    return uptime - start_ticks / os.sysconf("SC_CLK_TCK")


def main() -> int:
    marks: dict[str, float] = {"interpreter": process_age() - (time.perf_counter() - T0)}
    base = time.perf_counter() - marks["interpreter"]

    def mark(name: str) -> None:
        marks[name] = round(time.perf_counter() - base, 4)

    from portico.cli import qt_libs

    mark("import launcher")
    qt_libs.check()
    mark("platform check")
    import PySide6.QtWidgets  # noqa: F401

    mark("import Qt")
    import asyncio

    from portico.ui import app as app_mod

    mark("import app")
    from portico.ui.loop import PorticoEventLoop, ensure_application

    qapp = ensure_application(sys.argv[:1])
    qapp.setQuitOnLastWindowClosed(False)
    qapp.setWindowIcon(app_mod.app_icon())
    mark("QApplication")
    desktop = app_mod.DesktopApp(qapp, None)
    mark("window built")

    def painted() -> None:
        mark("first paint")
        print(json.dumps(marks), flush=True)
        desktop.request_quit()

    desktop.window.firstPainted.connect(painted)
    with asyncio.Runner(loop_factory=lambda: PorticoEventLoop(qapp)) as runner:
        return runner.run(desktop.run())


if __name__ == "__main__":
    sys.exit(main())
