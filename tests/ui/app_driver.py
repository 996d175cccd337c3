"""Run the real desktop app in a subprocess and report what happened (used by test_qt_app).

Usage: python app_driver.py MODE. MODE "start": print facts as JSON lines and quit once the
config is applied. MODE "wait-raise": print "ready" then quit when a second instance asks
us to raise the window.
"""

from __future__ import annotations

import asyncio
import json
import sys

from PySide6.QtCore import QTimer

from portico.ui import app as app_mod
from portico.ui.after_paint import AFTER_PAINT_MODULES
from portico.ui.loop import PorticoEventLoop, ensure_application
from portico.ui.single_instance import SingleInstance


def say(**facts: object) -> None:
    print(json.dumps(facts), flush=True)


def main(mode: str) -> int:
    qapp = ensure_application()
    qapp.setQuitOnLastWindowClosed(False)
    instance = SingleInstance()
    if not instance.acquire():
        say(event="second")
        return 0
    desktop = app_mod.DesktopApp(qapp, instance)
    desktop.window.firstPainted.connect(
        lambda: say(
            event="painted",
            mcp_loaded="mcp" in sys.modules,
            visible=desktop.window.isVisible(),
            deferred_loaded=[m for m in AFTER_PAINT_MODULES if m in sys.modules],
            chats_built=desktop.window.chats_built,
        )
    )
    desktop.chatsReady.connect(
        lambda: say(event="chats", place=type(desktop.window.chats_slot.content).__name__)
    )
    desktop.runtimeStarted.connect(lambda: say(event="runtime", mcp_loaded="mcp" in sys.modules))
    if mode == "start":
        desktop.configApplied.connect(
            lambda line: (say(event="applied", summary=line), desktop.request_quit())
        )
    else:
        desktop.runtimeStarted.connect(lambda: say(event="ready"))

        def raised() -> None:
            say(event="raised", visible=desktop.window.isVisible())
            QTimer.singleShot(50, desktop.request_quit)

        instance.raiseRequested.connect(raised)
    with asyncio.Runner(loop_factory=lambda: PorticoEventLoop(qapp)) as runner:
        rc = runner.run(desktop.run())
    say(event="exit", rc=rc, runtime_alive=desktop.runtime.is_running)
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
