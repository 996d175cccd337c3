"""Render the real app's main window on a running server's Tools tab (offscreen) to a PNG.

    QT_QPA_PLATFORM=offscreen .venv/bin/python tests/ui/pages_screenshot.py [OUT_DIR]

OUT_DIR defaults to docs/screenshots/ (writes main-window-tools.png). The app runs with a
throwaway PORTICO_HOME whose global config holds the showcase test server; a read-only
tool is tried so the result pane shows a real answer.
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

from tests.ui.pages_helpers import SHOWCASE, running_app, select, write_global  # noqa: E402
from tests.ui.qt_helpers import until  # noqa: E402


async def shoot(out: Path) -> Path:
    write_global(SHOWCASE)
    async with running_app("showcase") as desktop:
        window = desktop.window
        window.resize(1180, 680)
        window.show_servers("showcase")  # the rail on the left, the Servers place beside it
        window.splitter.setSizes([230, 870])
        select(desktop, "showcase")
        page = desktop.pages.tools
        window.page.setCurrentWidget(page)
        await until(lambda: page.server == "showcase" and page.tools, 30, "the tools")
        page.splitter.setSizes([400, 470])
        page.select_tool("lookup")
        page.form.fields["query"].widget.setText("pears")  # type: ignore[union-attr, attr-defined]
        page.call_button.click()
        await until(lambda: "found" in page.result_view.toPlainText(), 30, "the result")
        window.show_servers("showcase")  # the app may have settled on Chats meanwhile
        for row in window.notices.rows():
            row.dismiss()  # this machine's own notices (no keyring here) are not the subject
        await asyncio.sleep(0.2)
        path = out / "main-window-tools.png"
        if not window.grab().save(str(path)):
            raise RuntimeError(f"could not write {path}")
        return path


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
