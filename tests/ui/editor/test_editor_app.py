"""The config editor from the app: the menu item, the tray action and Edit… open it."""

from __future__ import annotations

from pathlib import Path

from pytestqt.qtbot import QtBot

from portico.runtime.events import ServerState, Status
from portico.ui.actions import ActionId
from portico.ui.app import DesktopApp
from portico.ui.loop import ensure_application
from tests.ui.editor_helpers import install_global, ready


async def test_menu_tray_and_edit_open_the_editor(qtbot: QtBot, project: Path) -> None:
    path = install_global("edit_servers.toml")
    desktop = DesktopApp(ensure_application())
    qtbot.addWidget(desktop.window)
    desktop.window.project = project
    assert desktop.editor is None

    desktop.window.config_editor_action.trigger()  # File > Config Editor
    editor = desktop.editor
    assert editor is not None and editor.isVisible()
    qtbot.addWidget(editor)
    await ready(editor)
    assert editor.project == project
    editor.close()

    desktop.tray.configEditorRequested.emit()  # the tray's "Open config editor"
    assert desktop.editor is editor and editor.isVisible()

    desktop.model.update_state(ServerState("docs", Status.RUNNING, tool_count=2))
    desktop.window.server_list.setCurrentIndex(desktop.model.index(0))
    labels = dict(desktop.window.server_actions(desktop.window.selected_state()))  # type: ignore[arg-type]
    assert labels["Edit…"] is True
    desktop.server_action(ActionId.EDIT, "docs")  # the context menu's Edit…
    await ready(editor)  # it read its files again (no edits: changes made elsewhere)
    assert editor.current() == (editor.file_for(path), "docs")
    assert editor.form.fields["url"].editor.text() == "https://docs.example.com/mcp"  # type: ignore[attr-defined]
    editor.close()
    desktop.tray.hide()
