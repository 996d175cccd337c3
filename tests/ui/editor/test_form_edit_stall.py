"""A form edit in the config editor never stalls the GUI loop: on a 400-server mcp.toml
one field edit re-checks the whole file (the CLI's own diagnostics), which takes longer
than a frame; the check runs in a worker, and an older check never overwrites a newer
one's diagnostics."""

from __future__ import annotations

import asyncio

import pytest
from PySide6.QtWidgets import QLineEdit
from pytestqt.qtbot import QtBot

from tests.helpers.heartbeat import Heartbeat, as_the_app_runs
from tests.ui.editor_helpers import open_editor, ready, write_big_config

pytestmark = pytest.mark.slow  # a big config, parsed several times

# The aim is 50 ms. Measured on the 2 shared cores at load 9-11: 51-117 ms (GIL hand-overs
# while the check runs in its worker, a young-generation collection of its objects on the
# GUI thread); before, the check ran on the GUI thread: 540 ms at load 3, over 1 s at load 9.
BOUND_MS = 250.0


async def test_a_form_edit_of_a_big_config_keeps_the_gui_loop_ticking(qtbot: QtBot) -> None:
    toml_path = write_big_config()
    window = await open_editor(qtbot)
    assert window.select("t7", toml_path)
    timeout = window.form.fields["timeout"].editor
    assert isinstance(timeout, QLineEdit) and timeout.text() == "30000"
    await asyncio.sleep(0.05)  # the form's first layout and paint is not the edit
    beat = Heartbeat()
    with as_the_app_runs():
        beat.start()
        timeout.setFocus()
        timeout.setText("12345")
        timeout.editingFinished.emit()
        await ready(window)
        await asyncio.sleep(0.05)  # a tick after the check: a blocked loop shows as a gap
        gap = beat.stop()
    print(f"\nlongest GUI gap during a form edit of 400 servers: {gap:.0f} ms")
    raw = window.raw_tab(toml_path).toPlainText()
    assert "[mcp.t7]" in raw and raw.count("timeout = 12345") == 1
    assert gap < BOUND_MS, f"the GUI loop stalled {gap:.0f} ms during the form edit"
