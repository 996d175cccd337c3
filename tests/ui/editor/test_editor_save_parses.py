"""One save in the editor is one parse of each config file and one apply in the app.

Before, a save was read four times: the editor's check, the app's reload after the
``saved`` signal, the runtime's file watcher, and the reload its ``ConfigChanged`` asked
for (so the servers were also applied twice). Now the save reads the files once, off the
GUI thread, hands that config to the session, and the watcher is told it was read.
"""

from __future__ import annotations

import asyncio

import pytest

from portico.config import parse_count
from tests.ui.editor_helpers import ready
from tests.ui.pages_helpers import command, running_app, write_global
from tests.ui.qt_helpers import until

pytestmark = pytest.mark.slow  # the app with a real server

CONFIG = f"""# one server
[mcp.tiny]
command = {command("tiny.py")}
timeout = 30000
"""


async def test_one_save_is_one_parse_and_one_apply() -> None:
    path = write_global(CONFIG)
    async with running_app("tiny") as desktop:
        # tiny runs before the first apply has ended: let start-up finish first
        await until(lambda: desktop.ops.running == 0, 30, "the start-up to finish")
        applied: list[str] = []
        desktop.configApplied.connect(applied.append)
        desktop.open_config_editor()
        editor = desktop.editor
        assert editor is not None
        await ready(editor)
        file = editor.file_for(path)
        editor.apply_raw(file, file.text.replace("timeout = 30000", "timeout = 45000"))
        await ready(editor)  # the edit's check (in a worker) is the edit's, not the save's
        parse_count.reset()
        assert await editor.save_now() == [path]
        await until(lambda: len(applied) == 1, 20, "the save to be applied")
        # Nothing else may read the file: give the runtime's watcher two of its polls
        # (each one interval plus the debounce) to show itself if it would.
        assert desktop.session is not None
        watcher = desktop.session.watcher
        assert watcher is not None
        await asyncio.sleep(2 * (watcher.interval + watcher.debounce) + 0.2)
        print(f"\nparses of {path.name} per save: {parse_count.PARSES[str(path)]}")
        assert parse_count.PARSES[str(path)] == 1
        assert len(applied) == 1 and watcher.reloads == 0
        assert "timeout = 45000" in path.read_text(encoding="utf-8")
        editor.close()  # no look at the disk starts after the app has gone
        await ready(editor)
