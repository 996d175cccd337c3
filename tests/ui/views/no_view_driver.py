"""Run the real app in a subprocess of its own with a server that has views connected and
its Tools page shown (Try it's view pane made), then say whether the web engine was
loaded: ``python no_view_driver.py`` prints one JSON line and quits. Used by
test_no_view_no_engine.py: nothing of QtWebEngine may cost a person who never sees a view."""

from __future__ import annotations

import asyncio
import json
import sys

import psutil
from PySide6.QtCore import QTimer

from portico.runtime.events import Status
from portico.ui import app as app_mod
from portico.ui.loop import PorticoEventLoop, ensure_application
from portico.ui.single_instance import SingleInstance


def main() -> int:
    qapp = ensure_application()
    qapp.setQuitOnLastWindowClosed(False)
    instance = SingleInstance()
    if not instance.acquire():
        return 2
    desktop = app_mod.DesktopApp(qapp, instance)
    timer = QTimer()
    shown = {"page": False}

    def look() -> None:
        state = desktop.model.state("viewer")
        if state is None or state.status is not Status.RUNNING:
            return
        if not shown["page"]:
            row = desktop.model.row_of("viewer")
            assert row is not None
            desktop.window.show_servers()
            desktop.window.server_list.setCurrentIndex(desktop.model.index(row))
            shown["page"] = True
            return
        tools = desktop.pages.tools if desktop.pages is not None else None
        if tools is None or tools.server != "viewer" or tools.row_of("show_weather") is None:
            return
        tools.select_tool("show_weather")  # a tool with a view: Try it's pane is there
        timer.stop()
        children = psutil.Process().children(recursive=True)
        print(
            json.dumps(
                {
                    "tools": [
                        t for t in ("show_weather", "refresh") if tools.row_of(t) is not None
                    ],
                    "pane": tools.view_pane is not None,
                    "engine_modules": sorted(
                        m for m in sys.modules if m.startswith("PySide6.QtWebEngine")
                    ),
                    "views_engine": "portico.ui.views.engine" in sys.modules,
                    "apps_modules": sorted(
                        m for m in sys.modules if m.startswith(("portico.apps", "portico.ui.views"))
                    ),
                    "engine_processes": sum("QtWebEngine" in c.name() for c in children),
                }
            ),
            flush=True,
        )
        desktop.request_quit()

    timer.timeout.connect(look)
    timer.start(50)
    with asyncio.Runner(loop_factory=lambda: PorticoEventLoop(qapp)) as runner:
        return runner.run(desktop.run())


if __name__ == "__main__":
    sys.exit(main())
