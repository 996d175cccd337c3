"""Quitting the app while the config editor saves: the save ends before the app does (a
bounded wait in ``DesktopApp.shutdown``), its file is written whole, and no editor task
is left pending. Before, shutdown never looked at the editor: the save's task was still
running when ``run`` returned, to be cancelled or destroyed with the loop."""

from __future__ import annotations

import pytest

from portico import paths
from tests.ui.editor_helpers import ready
from tests.ui.pages_helpers import running_app, write_global
from tests.ui.qt_helpers import until

pytestmark = pytest.mark.slow  # the app, and a big config saved

# A save of this many (~1.5 s idle) outlasts the rest of the shutdown: without the wait, its
# `saved` reached an app whose runtime had shut down ("loading the config failed", logged).
SERVERS = 1500


def _config() -> str:
    return "# my servers\n" + "".join(
        f'\n[mcp.t{i}]\ncommand = ["npx", "-y", "pkg-{i}"]\nenabled = false\ntimeout = 30000\n'
        for i in range(SERVERS)
    )


async def test_a_quit_during_a_save_lets_the_save_end() -> None:
    path = write_global(_config())
    async with running_app() as desktop:
        desktop.open_config_editor()
        editor = desktop.editor
        assert editor is not None
        await ready(editor)
        editor.file_for(path).set("t7", ("timeout",), 12345)
        save = editor.save()
        await until(lambda: editor._saving, 10, "the save to start")
        assert desktop.window.isVisible()
        desktop.request_quit()  # the tray's Quit, once no unsaved edit is to be asked about
        # The main window is hidden at the end of the shutdown: the save has ended by then.
        await until(lambda: not desktop.window.isVisible(), 60, "the app to shut down")
        assert save.done(), "the app shut down with the editor's save still running"
    assert save.done() and not save.cancelled() and save.exception() is None
    assert editor.ops.running == 0 and editor.models.ops.running == 0
    text = paths.paths().global_toml.read_text(encoding="utf-8")
    assert text.count("timeout = 12345") == 1 and text.count("[mcp.t") == SERVERS
    assert f"Saved {path}" in editor.notice.text()
