"""The editor's server list follows an edit by replacing the rows that changed: a raw edit
that renames one server of 200 replaces its row, every other row stays the same item, and
the selection and the scroll stay where the person left them.

Measured (load 5, 2 shared cores), ``populate`` of 400 servers after a rename: 9-12 ms
rebuilding every row; 1-2 ms replacing one."""

from __future__ import annotations

import time

import pytest
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QTreeWidgetItem
from pytestqt.qtbot import QtBot

from portico.ui.editor.server_list import PATH_ROLE, ServerList
from tests.ui.editor_helpers import open_editor, ready, write_big_config

pytestmark = pytest.mark.slow  # a big config, parsed several times

SERVERS = 200


def _items(tree: ServerList) -> dict[str, QTreeWidgetItem]:
    return {item.text(0): item for item in tree._items()}


async def test_a_rename_replaces_one_row_and_keeps_selection_and_scroll(qtbot: QtBot) -> None:
    toml_path = write_big_config(SERVERS)
    window = await open_editor(qtbot)
    tree = window.server_list
    assert window.select("t150", toml_path)
    current = tree.currentItem()
    assert current is not None
    tree.scrollToItem(current)
    scroll = tree.verticalScrollBar().value()
    assert scroll > 0
    before = _items(tree)
    selected: list[tuple[str, str]] = []
    tree.serverSelected.connect(lambda path, server: selected.append((path, server)))

    raw = window.raw_tab(toml_path)
    text = raw.toPlainText()
    cursor = QTextCursor(raw.document())
    cursor.setPosition(text.index("[mcp.t7]") + len("[mcp.t7"))
    cursor.insertText("x")
    raw.flush()
    await ready(window)

    after = _items(tree)
    assert "t7x" in after and "t7" not in after and len(after) == SERVERS
    kept = [name for name in before if name != "t7"]
    assert all(after[name] is before[name] for name in kept), "rows rebuilt"
    assert tree.selected() == (str(toml_path), "t150") and selected == []
    assert tree.verticalScrollBar().value() == scroll
    assert window.form.server == "t150"

    # the list of a file that no longer parses says so, and comes back when it does
    cursor.insertText(" = [")
    raw.flush()
    await ready(window)
    assert tree.rows() == []
    headers = [tree.topLevelItem(i) for i in range(tree.topLevelItemCount())]
    header = next(h for h in headers if h is not None and h.data(0, PATH_ROLE) == str(toml_path))
    broken = header.child(0)
    assert broken is not None and "does not parse" in broken.text(0)
    for _ in " = [":
        cursor.deletePreviousChar()
    raw.flush()
    await ready(window)
    assert len(tree.rows()) == SERVERS and "t7x" in _items(tree)


async def test_populating_400_servers_after_a_rename_touches_one_row(qtbot: QtBot) -> None:
    toml_path = write_big_config(400)
    window = await open_editor(qtbot)
    file = window.file_for(toml_path)
    file.rename_server("t200", "t200x")
    started = time.perf_counter()
    window.server_list.populate(window.files)
    took = (time.perf_counter() - started) * 1000
    print(f"\npopulate of 400 servers after a rename: {took:.1f} ms")
    assert [name for name, _badge in window.server_list.rows()][200] == "t200x"
