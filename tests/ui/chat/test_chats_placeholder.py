"""The window paints with a placeholder in the Chats place; building the real place swaps
it in without moving or resizing anything (no flash, no jump)."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from portico.ui.main_window import MainWindow


def test_the_real_chats_place_takes_the_placeholders_geometry(qtbot: QtBot) -> None:
    window = MainWindow()
    qtbot.addWidget(window)
    window.resize(960, 620)
    window.show()
    qtbot.waitExposed(window)
    assert not window.chats_built and window.place == "Chats"
    placeholder = window.chats_slot.placeholder
    assert placeholder is not None and placeholder.isVisible()
    before = {
        "window": window.geometry(),
        "slot": window.chats_slot.geometry(),
        "rail": window.rail.geometry(),
    }
    chats = window.chats  # what DesktopApp.build_after_paint does once the imports are in
    qtbot.wait(50)
    after = {
        "window": window.geometry(),
        "slot": window.chats_slot.geometry(),
        "rail": window.rail.geometry(),
    }
    assert after == before
    assert window.chats_built and window.chats_slot.content is chats
    assert chats.isVisible() and chats.geometry() == window.chats_slot.rect()
    assert window.chats_slot.placeholder is None
    assert window.chats is chats  # built once
