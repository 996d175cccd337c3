"""The config editor follows its files on disk: a Remove from the main window reloads it
quietly; edits that touch other keys are re-applied onto the new file; edits of the same
key ask (Reload / Keep mine, with the difference shown); closing with unsaved edits asks
Save / Discard / Cancel."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QMessageBox, QPlainTextEdit

from portico.config.document import ConfigDocument
from tests.ui.editor_helpers import ready
from tests.ui.pages_helpers import command, running_app, write_global
from tests.ui.qt_helpers import gone, until

pytestmark = pytest.mark.slow  # real servers, processes or the app

CONFIG = f"""# two servers
[mcp.tiny]
command = {command("tiny.py")}
timeout = 30000

[mcp.other]
command = {command("tiny.py", "--name", "other")}
timeout = 30000
"""


def _button(box: QMessageBox, text: str) -> object:
    return next(b for b in box.buttons() if b.text().replace("&", "") == text)


def _lines_in_view(view: QPlainTextEdit) -> set[str]:
    """The lines of ``view`` a person sees whole without scrolling."""
    area = view.viewport().rect()
    seen = set()
    block = view.document().firstBlock()
    while block.isValid():
        rect = view.cursorRect(QTextCursor(block))
        if area.contains(rect.topLeft()) and area.contains(rect.bottomLeft()):
            seen.add(block.text())
        block = block.next()
    return seen


def _line_colour(view: QPlainTextEdit, text: str) -> str:
    block = view.document().find(text).block()
    formats = block.layout().formats()
    return formats[0].format.foreground().color().name() if formats else "plain"


async def test_the_editor_follows_changes_on_disk() -> None:
    path = write_global(CONFIG)
    async with running_app("tiny", "other") as desktop:
        desktop.open_config_editor()
        editor = desktop.editor
        assert editor is not None
        await ready(editor)
        file = editor.file_for(path)
        assert set(file.server_names()) == {"tiny", "other"}

        # 1. Remove in the main window: the editor (no edits) reloads quietly
        box = desktop.pages.confirm_remove("other")
        next(b for b in box.buttons() if b.text() == "&Remove").click()
        await until(lambda: file.server_names() == ["tiny"], 30, "the editor to reload")
        assert not editor.conflict_bar.isVisible() and not editor.dirty

        # 2. an edit of tiny, then another program adds a server: the edit is re-applied
        editor.apply_raw(file, file.text.replace("timeout = 30000", "timeout = 45000"))
        assert editor.dirty
        outside = ConfigDocument.load(path)
        outside.add_server("third", {"command": "echo"})
        outside.save()
        await until(lambda: "third" in file.server_names(), 10, "the edit re-applied")
        assert "timeout = 45000" in file.text and editor.dirty
        assert "re-applied" in editor.notice.text()
        await editor.save_now()
        on_disk = path.read_text(encoding="utf-8")
        assert "timeout = 45000" in on_disk and "[mcp.third]" in on_disk
        assert "# two servers" in on_disk

        # 3. both change the same key: the bar asks; Keep mine shows the diff, then writes
        editor.apply_raw(file, file.text.replace("timeout = 45000", "timeout = 50000"))
        path.write_text(on_disk.replace("timeout = 45000", "timeout = 60000"), encoding="utf-8")
        await until(lambda: editor.conflict_bar.isVisibleTo(editor), 10, "the conflict bar")
        assert "tiny.timeout" in editor.conflict_label.text()
        keep = await editor.keep_mine()
        assert keep is not None
        await until(lambda: keep.view.viewport().isVisible(), 5, "the difference shown")
        # Both changed lines are on screen at once, coloured, without scrolling or a
        # Show Details click (a message box's details showed six lines, these below them).
        assert _lines_in_view(keep.view) >= {"-timeout = 60000", "+timeout = 50000"}
        lines = ("-timeout = 60000", "+timeout = 50000", "[mcp.tiny]")
        colours = await until(
            lambda: len({_line_colour(keep.view, line) for line in lines}) == 3, 5, "colours"
        )
        assert colours  # removed, added and context lines each look different
        keep.overwrite_button.click()
        await until(lambda: "timeout = 50000" in path.read_text(encoding="utf-8"), 10, "mine")
        assert not editor.dirty and not editor.conflict_bar.isVisibleTo(editor)

        # 4. closing with unsaved edits asks; Cancel keeps them, Discard drops them
        editor.show()
        editor.apply_raw(file, file.text.replace("timeout = 50000", "timeout = 51000"))
        editor.close()
        ask = await until(lambda: editor.confirmation, 5, "the unsaved-changes question")
        assert editor.isVisible()
        _button(ask, "Cancel").click()  # type: ignore[attr-defined]
        assert editor.isVisible() and editor.dirty
        editor.close()
        ask = await until(
            lambda: editor.confirmation if editor.confirmation is not ask else None, 5
        )
        _button(ask, "Discard").click()  # type: ignore[attr-defined]
        await until(lambda: gone(editor), 5, "the editor to close")
        assert not editor.dirty and "timeout = 50000" in path.read_text(encoding="utf-8")
