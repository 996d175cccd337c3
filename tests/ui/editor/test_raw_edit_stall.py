"""A raw edit of a big config never stalls the GUI loop: when typing pauses, the text of a
600-server mcp.toml (3,600 lines) is parsed into its round-trip document and checked, which
takes longer than a frame; both run in a worker, and the list and the form follow once
they are done. A form edit made while the raw text is read applies to what it became."""

from __future__ import annotations

import asyncio

import pytest
from PySide6.QtWidgets import QLineEdit
from pytestqt.qtbot import QtBot

from portico.ui.editor.raw_tab import RawTab
from tests.helpers.heartbeat import Heartbeat, as_the_app_runs
from tests.ui.editor_helpers import open_editor, ready, write_big_config

pytestmark = pytest.mark.slow  # a big config, parsed several times

SERVERS = 600
# Measured idle (load 0.5): 12-20 ms after; before, on the GUI thread, 110-140 ms.
BOUND_MS = 50.0


def _type_at(tab: RawTab, anchor: str, typed: str) -> None:
    """Type ``typed`` right after the first ``anchor`` (one block re-highlighted, as a
    keystroke does; replacing the whole text would be its own stall)."""
    cursor = tab.textCursor()
    cursor.setPosition(tab.toPlainText().index(anchor) + len(anchor))
    cursor.insertText(typed)
    tab.setTextCursor(cursor)


async def test_a_raw_edit_of_a_big_config_keeps_the_gui_loop_ticking(qtbot: QtBot) -> None:
    toml_path = write_big_config(SERVERS)
    window = await open_editor(qtbot)
    raw = window.raw_tab(toml_path)
    assert raw.blockCount() > 3000
    window.tabs.setCurrentWidget(raw)
    _type_at(raw, "[mcp.t7", "x")  # renames t7 to t7x
    await asyncio.sleep(0.05)  # the keystroke's layout and paint are not the edit
    beat = Heartbeat()
    with as_the_app_runs():
        beat.start()
        raw.flush()  # what the debounce timer does when typing pauses
        await ready(window)
        await asyncio.sleep(0.05)  # a tick after the read: a blocked loop shows as a gap
        gap = beat.stop()
    print(f"\nlongest GUI gap while a raw edit of {SERVERS} servers is read: {gap:.0f} ms")
    names = [name for name, _badge in window.server_list.rows()]
    assert "t7x" in names and "t7" not in names and len(names) == SERVERS
    assert window.file_for(toml_path).doc is not None and window.dirty
    assert gap < BOUND_MS, f"the GUI loop stalled {gap:.0f} ms while the raw edit was read"


async def test_a_form_edit_made_while_the_raw_text_is_read_applies_to_it(
    qtbot: QtBot,
) -> None:
    toml_path = write_big_config(SERVERS)
    window = await open_editor(qtbot)
    assert window.select("t3", toml_path)
    raw = window.raw_tab(toml_path)
    _type_at(raw, "[mcp.t9", "y")
    raw.flush()
    assert window.file_for(toml_path).server_names()[9] == "t9"  # not read yet
    timeout = window.form.fields["timeout"].editor
    assert isinstance(timeout, QLineEdit)
    timeout.setText("4242")  # the form's edit of t3, meanwhile
    timeout.editingFinished.emit()
    await ready(window)
    text = window.file_for(toml_path).text
    assert "[mcp.t9y]" in text, "the raw edit was dropped"
    assert "[mcp.t3]" in text and text.count("timeout = 4242") == 1, "the form edit was dropped"
    assert raw.toPlainText() == text
