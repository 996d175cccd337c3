"""Where a launch's time goes, phase by phase, inside one real app process.

python launch_probe.py [--eager]  (with portico importable; QT_QPA_PLATFORM and DISPLAY as
wanted) prints one JSON line once the Chats place is built, then quits the app cleanly:
for each phase, seconds since the process started (``NAME``) and the process's CPU time
then (``NAME cpu``), which does not depend on how loaded the machine is.

``--eager`` imports the modules the app defers past its first paint (ui/after_paint.py)
before the window is built, as the app did before: the baseline of the launch benchmark.
A line ``portico-probe: first paint`` goes to stderr at the first paint, so the output of
``python -X importtime`` splits into the imports before it and after it. ``longest stall``
is the longest the GUI loop went without running a 5 ms timer between the first paint
and chat-ready: how long input would have waited.
"""

from __future__ import annotations

import itertools
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


def main(argv: list[str]) -> int:
    marks: dict[str, float] = {"interpreter": process_age() - (time.perf_counter() - T0)}
    base = time.perf_counter() - marks["interpreter"]

    def mark(name: str) -> None:
        marks[name] = round(time.perf_counter() - base, 4)
        marks[f"{name} cpu"] = round(time.process_time(), 4)

    from portico.cli import qt_libs

    mark("import launcher")
    qt_libs.check()
    mark("platform check")
    import PySide6.QtWidgets  # noqa: F401

    mark("import Qt")
    import asyncio

    from portico.ui import app as app_mod

    if "--eager" in argv:
        from portico.ui.after_paint import import_after_paint

        import_after_paint()
    mark("import app")
    from portico.ui.loop import PorticoEventLoop, ensure_application

    qapp = ensure_application(sys.argv[:1])
    qapp.setQuitOnLastWindowClosed(False)
    qapp.setWindowIcon(app_mod.app_icon())
    mark("QApplication")
    desktop = app_mod.DesktopApp(qapp, None)
    mark("window built")

    from PySide6.QtCore import QTimer

    beats: list[float] = []
    heartbeat = QTimer()
    heartbeat.setInterval(5)
    heartbeat.timeout.connect(lambda: beats.append(time.perf_counter()))

    def painted() -> None:
        mark("first paint")
        print("portico-probe: first paint", file=sys.stderr, flush=True)
        beats.append(time.perf_counter())
        heartbeat.start()

    def chats_ready() -> None:
        heartbeat.stop()
        beats.append(time.perf_counter())
        mark("chats ready")
        marks["longest stall"] = round(max(b - a for a, b in itertools.pairwise(beats)), 4)
        print(json.dumps(marks), flush=True)
        desktop.request_quit()

    desktop.window.firstPainted.connect(painted)
    desktop.chatsReady.connect(chats_ready)
    with asyncio.Runner(loop_factory=lambda: PorticoEventLoop(qapp)) as runner:
        return runner.run(desktop.run())


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
