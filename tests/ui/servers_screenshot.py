"""Render the Servers place, the Activity tab and the Overview's health in the light and
the dark palette (offscreen) to PNGs for the README.

    QT_QPA_PLATFORM=offscreen .venv/bin/python tests/ui/servers_screenshot.py [OUT_DIR]

OUT_DIR defaults to docs/screenshots/ (writes servers-{place,activity,health}-{light,dark}.png).
The app runs with a throwaway PORTICO_HOME: the showcase test server, a tiny one and one
that fails; a few calls are made so Activity and Health have something to show.
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

from PySide6.QtCore import Qt  # noqa: E402

from tests.ui.pages_helpers import SHOWCASE, command, running_app, select, write_global  # noqa: E402
from tests.ui.qt_helpers import until  # noqa: E402

CONFIG = (
    SHOWCASE
    + f"""
[mcp.notes]
command = {command("tiny.py", "--tools", "3", "--name", "notes")}

[mcp.broken]
command = {command("tiny.py", "--exit", "3")}
"""
)


async def shoot(out: Path) -> list[Path]:
    from portico.ui.palette import follow_os_scheme

    write_global(CONFIG)
    written: list[Path] = []
    async with running_app("showcase", "notes") as desktop:
        window = desktop.window
        window.resize(1100, 680)
        window.splitter.setSizes([230, 870])
        pages = desktop.pages
        select(desktop, "showcase")
        tools = pages.tools
        await until(lambda: tools.server == "showcase" and tools.tools, 30, "the tools")
        for query in ("pears", "apples", "plums", "figs", "kiwis", "limes"):
            tools.select_tool("lookup")
            tools.form.fields["query"].widget.setText(query)  # type: ignore[union-attr, attr-defined]
            tools.call_button.click()
            await until(lambda q=query: q in tools.result_view.toPlainText(), 30, "the result")
        follower = follow_os_scheme(desktop.app)
        health = pages.overview.health
        activity = pages.activity
        for scheme, name in ((Qt.ColorScheme.Light, "light"), (Qt.ColorScheme.Dark, "dark")):
            follower.follow(scheme)
            window.show_servers("showcase")  # the window opens on the Chats place
            window.page.setCurrentWidget(pages.overview)
            pages.refresh()
            await until(lambda: health.health is not None and health.health.calls >= 6, 30)
            await asyncio.sleep(0.3)
            written.append(_save(window, out / f"servers-place-{name}.png"))
            written.append(_save(window, out / f"servers-health-{name}.png", pages.overview))
            window.page.setCurrentWidget(pages.activity)
            await until(lambda: activity.model.rowCount() >= 6, 30, "the activity")
            for row in range(activity.model.rowCount() - 1, -1, -1):
                if activity.model.items[row].method == "tools/call":
                    activity.select_row(row)
                    break
            await asyncio.sleep(0.3)
            written.append(_save(window, out / f"servers-activity-{name}.png"))
    return written


def _save(window: object, path: Path, widget: object | None = None) -> Path:
    target = widget if widget is not None else window
    if not target.grab().save(str(path)):  # type: ignore[attr-defined]
        raise RuntimeError(f"could not write {path}")
    return path


def main() -> int:
    from portico.ui.loop import PorticoEventLoop, ensure_application

    out = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO / "docs" / "screenshots"
    out.mkdir(parents=True, exist_ok=True)
    app = ensure_application()
    app.setQuitOnLastWindowClosed(False)
    with asyncio.Runner(loop_factory=lambda: PorticoEventLoop(app)) as runner:
        for path in runner.run(shoot(out)):
            print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
