"""The Servers place in the real app: the empty state with Add server…, and the context
menu from the keyboard (Shift+F10, the Menu key)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMenu

from tests.ui.pages_helpers import command, running_app, select, write_global
from tests.ui.qt_helpers import until


async def test_no_servers_shows_an_add_server_button_not_a_selection_hint() -> None:
    write_global("# nothing configured yet\n")
    async with running_app() as desktop:
        place = desktop.window.servers
        await until(lambda: place.is_empty, 30, "the empty state")
        place.show()
        assert place.empty.isVisible()
        assert not place.page.isVisible()  # no "Select a server on the left."
        asked: list[bool] = []
        desktop.window.addServerRequested.connect(lambda: asked.append(True))
        QTest.mouseClick(place.empty.add_button, Qt.MouseButton.LeftButton)
        QTest.mouseClick(place.add_button, Qt.MouseButton.LeftButton)
        assert asked == [True, True]


async def test_shift_f10_and_the_menu_key_open_the_context_menu() -> None:
    write_global(f"[mcp.tiny]\ncommand = {command('tiny.py')}\n")
    async with running_app("tiny") as desktop:
        window = desktop.window
        window.show()
        assert not window.servers.is_empty
        select(desktop, "tiny")
        window.server_list.setFocus()
        for key, mods in (
            (Qt.Key.Key_F10, Qt.KeyboardModifier.ShiftModifier),
            (Qt.Key.Key_Menu, Qt.KeyboardModifier.NoModifier),
        ):
            QTest.keyClick(window.server_list, key, mods)
            menu = await until(lambda: _open_menu(), 10, "the context menu")
            labels = [a.text() for a in menu.actions()]
            assert "Restart" in labels and "Remove" in labels
            menu.close()


def _open_menu() -> QMenu | None:
    popup = QApplication.activePopupWidget()
    if isinstance(popup, QMenu) and popup.isVisible():
        return popup
    return None
