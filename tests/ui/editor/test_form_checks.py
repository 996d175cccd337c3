"""A form edit's check runs in a worker: the field errors and markers are those of the
text the file holds when the check ends, never an older edit's."""

from __future__ import annotations

import asyncio

from PySide6.QtWidgets import QLineEdit
from pytestqt.qtbot import QtBot

from tests.ui.editor_helpers import install_global, open_editor, ready


def _type(editor: QLineEdit, text: str) -> None:
    editor.setFocus()
    editor.setText(text)
    editor.editingFinished.emit()


async def test_an_older_check_never_shows_over_a_newer_edit(qtbot: QtBot) -> None:
    path = install_global("edit_servers.toml")
    padding = "".join(f'\n[mcp.pad{i}]\ncommand = ["npx", "pkg-{i}"]\n' for i in range(80))
    path.write_text(path.read_text(encoding="utf-8") + padding, encoding="utf-8")  # slower
    window = await open_editor(qtbot)
    window.select("docs", path)
    port = window.form.fields["oauth.callback_port"]
    assert isinstance(port.editor, QLineEdit)
    _type(port.editor, "99999")
    await ready(window)
    assert port.error_text.endswith("docs.oauth.callback_port: 99999 is above the maximum 65535")
    _type(port.editor, "33419")  # its check starts in a worker...
    assert window.ops.running == 1
    await asyncio.sleep(0.01)  # the worker has taken that text
    _type(port.editor, "70000")  # ...and another edit lands before it ends
    await ready(window)
    assert port.error_text.endswith("docs.oauth.callback_port: 70000 is above the maximum 65535")
    [marker] = window.raw_tab(path).markers.values()
    assert marker[0].endswith("70000 is above the maximum 65535")
    assert window.file_for(path).checked
    _type(port.editor, "33419")
    await ready(window)
    assert port.error_text == "" and window.raw_tab(path).markers == {}
