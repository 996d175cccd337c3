"""Render Try it with a server that answers with tasks (offscreen) to a PNG.

    QT_QPA_PLATFORM=offscreen .venv/bin/python tests/ui/tasks_screenshot.py [OUT_DIR]

OUT_DIR defaults to docs/screenshots/ (writes tasks-tryit.png): tests/servers/tasking.py
over HTTP, one task completed and one still running, its status on the call line.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
HOME = tempfile.mkdtemp(prefix="portico-shot-")
os.environ["PORTICO_HOME"] = HOME

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.helpers.servers import start_tasking, stop_server  # noqa: E402
from tests.ui.pages_helpers import running_app, select, write_global  # noqa: E402
from tests.ui.qt_helpers import until  # noqa: E402


async def shoot(out: Path) -> Path:
    server = start_tasking("--poll-ms", "100")
    try:
        write_global(f'[mcp.tasking]\nurl = "{server.url}"\n')
        async with running_app("tasking") as desktop:
            window = desktop.window
            window.resize(1180, 680)
            window.show_servers("tasking")
            window.splitter.setSizes([230, 870])
            select(desktop, "tasking")
            page = desktop.pages.tools
            window.page.setCurrentWidget(page)
            await until(lambda: page.row_of("slow_compute") is not None, 30, "the tools")
            page.splitter.setSizes([330, 540])
            page.select_tool("slow_compute")
            spin = page.form.fields["seconds"].widget  # type: ignore[union-attr]
            spin.setValue(0.5)  # type: ignore[attr-defined]
            page.call_button.click()
            await until(lambda: "computed" in page.result_view.toPlainText(), 30, "a result")
            spin.setValue(60)  # type: ignore[attr-defined]
            page.call_button.click()
            status = page.call_status
            await until(lambda: "step 2 of 5" in status.text(), 60, "a running task")
            await until(lambda: page.task_panel.list.count() == 2, 10, "two tasks")
            window.show_servers("tasking")
            for row in window.notices.rows():
                row.dismiss()
            await asyncio.sleep(0.3)
            path = out / "tasks-tryit.png"
            if not window.grab().save(str(path)):
                raise RuntimeError(f"could not write {path}")
            page.cancel_button.click()
            return path
    finally:
        stop_server(server)


def main() -> int:
    from portico.ui.loop import PorticoEventLoop, ensure_application

    out = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO / "docs" / "screenshots"
    out.mkdir(parents=True, exist_ok=True)
    app = ensure_application()
    app.setQuitOnLastWindowClosed(False)
    with asyncio.Runner(loop_factory=lambda: PorticoEventLoop(app)) as runner:
        print(runner.run(shoot(out)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
