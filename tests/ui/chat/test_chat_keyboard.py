"""Keyboard only: the rail, the status strip, a turn with its inline approval, a new chat
and the search, all without the mouse; the new widgets carry accessible names."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QWidget
from pytestqt.qtbot import QtBot

from portico.prompts import ApprovalChoice
from portico.runtime.events import ServerState, Status
from portico.ui.chat.controller import ChatController
from portico.ui.chat.tool_card import ApprovalPanel, ToolCard
from portico.ui.main_window import MainWindow
from tests.servers.model_server import text, tool_call
from tests.ui.chat_helpers import (
    make_active,
    model_server,
    models,
    needs_npm,
    running_app,
    write_config,
)
from tests.ui.qt_helpers import until

pytestmark = pytest.mark.slow  # talks to real servers or processes

__all__ = ["model_server", "models"]


def _window(qtbot: QtBot) -> MainWindow:
    window = MainWindow()
    # Closing this window quits instead (no tray here): hide it, or its shortcuts stay
    # live and make the next test's Ctrl+1 / Ctrl+2 ambiguous.
    qtbot.addWidget(window, before_close_func=lambda w: w.hide())
    for state in (
        ServerState("files", Status.RUNNING, tool_count=11),
        ServerState("github", Status.RUNNING, tool_count=26),
        ServerState("linear", Status.NEEDS_AUTH, error="the refresh token was revoked"),
    ):
        window.model.update_state(state)
    window.chats.pane.set_states(window.model.states())
    window.show()
    make_active(window)
    return window


def test_status_strip_opens_the_servers_place_at_the_server_that_needs_you(qtbot: QtBot) -> None:
    window = _window(qtbot)
    strip = window.chats.pane.strip
    assert strip.text() == "3 servers · 37 tools · 1 needs sign-in"
    window.chats.pane.serversRequested.connect(window.show_servers)
    strip.setFocus()
    QTest.keyClick(strip, Qt.Key.Key_Space)
    assert window.place == "Servers"
    selected = window.selected_state()
    assert selected is not None and selected.name == "linear"


def test_ctrl_1_and_ctrl_2_switch_places(qtbot: QtBot) -> None:
    window = _window(qtbot)
    assert window.place == "Chats"
    QTest.keyClick(
        window.chats.pane.composer.input, Qt.Key.Key_2, Qt.KeyboardModifier.ControlModifier
    )
    assert window.place == "Servers" and window.rail_buttons["Servers"].isChecked()
    QTest.keyClick(window.server_list, Qt.Key.Key_1, Qt.KeyboardModifier.ControlModifier)
    assert window.place == "Chats"
    assert QApplication.focusWidget() is window.chats.pane.composer.input


def test_tab_reaches_every_control_of_the_chat(qtbot: QtBot) -> None:
    window = _window(qtbot)
    composer = window.chats.pane.composer
    composer.input.setFocus()
    seen: list[QWidget] = []
    for _ in range(40):
        widget = QApplication.focusWidget()
        if widget is not None:
            seen.append(widget)
        QTest.keyClick(widget or window, Qt.Key.Key_Tab)
    names = {w.accessibleName() for w in seen}
    assert any(n.startswith("server status: 3 servers") for n in names)
    for wanted in (
        "message input",
        "model",
        "YOLO: run tools without asking",
        "Send",
        "search chats",
        "New chat",
        "conversation list",
        "Chats",
    ):
        assert wanted in names, f"{wanted} not reached by Tab (reached: {sorted(names)})"
    assert all(w.accessibleName() for w in seen if w.isVisible()), [
        type(w).__name__ for w in seen if not w.accessibleName()
    ]


def _a_call_that_asks(models: Any, answer: str) -> None:
    """The model's turn: one call that asks for approval, then ``answer``."""
    write_config(models)
    models.script(tool_call("everything__toggle-simulated-logging", {}), text(answer))


async def _the_approval(chat: ChatController) -> tuple[ToolCard, ApprovalPanel]:
    card = await until(lambda: next(iter(chat.cards.values()), None), 30, "the card")
    panel = await until(lambda: card.approval, 30, "the inline approval")
    return card, panel


@needs_npm
async def test_a_turn_and_its_approval_by_keyboard(models, qtbot: QtBot) -> None:
    _a_call_that_asks(models, "Done by keyboard.")
    async with running_app() as desktop:
        chat = desktop.chat
        window = desktop.window

        def focused() -> QWidget | None:
            make_active(window)
            return window.focusWidget()

        field = focused()
        assert field is chat.composer.input  # the app opened with the focus in the input
        QTest.keyClicks(field, "toggle logging")
        QTest.keyClick(field, Qt.Key.Key_Return)
        card, panel = await _the_approval(chat)
        assert focused() is panel.deny_button
        for _ in range(3):  # Deny -> Always -> Session -> Once
            QTest.keyClick(focused(), Qt.Key.Key_Backtab)
        assert focused() is panel.buttons[ApprovalChoice.ONCE]
        QTest.keyClick(focused(), Qt.Key.Key_Space)
        await until(lambda: card.state.outcome == "ok", 30, "the call approved by keyboard")
        await until(lambda: not chat.running, 30, "the turn to end")
        first = chat.current.id
        await until(lambda: first in chat.place.conversations.ids(), 20, "listed")

        make_active(window)
        QTest.keyClick(chat.composer.input, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
        await until(lambda: chat.current.id != first, 20, "a new chat (Ctrl+N)")
        assert focused() is chat.composer.input

        make_active(window)
        QTest.keyClick(
            chat.composer.input,
            Qt.Key.Key_F,
            Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier,
        )
        search = chat.place.conversations.search
        assert focused() is search
        QTest.keyClicks(search, "toggle")
        await until(lambda: chat.place.conversations.ids() == [first], 20, "the search hit")
        QTest.keyClick(search, Qt.Key.Key_Tab)  # to New
        QTest.keyClick(focused(), Qt.Key.Key_Tab)  # to the list
        assert focused() is chat.place.conversations.list
        QTest.keyClick(chat.place.conversations.list, Qt.Key.Key_Down)
        QTest.keyClick(chat.place.conversations.list, Qt.Key.Key_Return)  # opens it
        await until(lambda: chat.current.id == first, 20, "the found chat to open")


@needs_npm
async def test_an_approval_that_comes_while_the_person_is_in_servers_leaves_them_the_keyboard(
    models, qtbot: QtBot
) -> None:
    _a_call_that_asks(models, "Done.")
    async with running_app() as desktop:
        chat = desktop.chat
        window = desktop.window
        make_active(window)
        QTest.keyClicks(chat.composer.input, "toggle logging")
        QTest.keyClick(chat.composer.input, Qt.Key.Key_Return)
        window.show_servers()  # before the model has answered
        card, panel = await _the_approval(chat)
        make_active(window)
        assert window.focusWidget() is window.server_list  # not the hidden Deny
        QTest.keyClick(window.focusWidget(), Qt.Key.Key_Space)  # a hidden Deny took it once
        assert card.approval is panel and panel.deny_button.isEnabled()  # nothing answered
        window.show_chats()
        panel.buttons[ApprovalChoice.ONCE].click()
        await until(lambda: card.state.outcome == "ok", 30, "the call approved")
        await until(lambda: not chat.running, 30, "the turn to end")
