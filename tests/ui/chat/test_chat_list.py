"""The chat list in the app: titles made from the first words (no request to the model),
Pin puts a chat first under "Pinned", Archive moves it to the Archived list, Delete
hides it with an Undo that brings it back, and once the Undo goes it is gone for good."""

from __future__ import annotations

import sqlite3

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from portico.paths import paths
from portico.ui.chat.controller import ChatController
from tests.servers.model_server import text
from tests.ui.chat_helpers import model_server, models, running_app, write_config
from tests.ui.qt_helpers import until

pytestmark = pytest.mark.slow
__all__ = ["model_server", "models"]


def _menu(chat: ChatController, conversation_id: str, action: str) -> None:
    lst = chat.place.conversations
    lst.select(conversation_id)
    menu = lst.actions_menu()
    [item] = [a for a in menu.actions() if a.text() == action]
    item.trigger()


async def _ask(chat: ChatController, qtbot: QtBot, question: str) -> str:
    qtbot.keyClicks(chat.composer.input, question)
    qtbot.keyClick(chat.composer.input, Qt.Key.Key_Return)
    await until(lambda: not chat.running and len(chat.transcript.messages) == 2, 30, "answer")
    assert chat.current is not None
    return chat.current.id


async def test_pin_archive_delete_and_undo(models, qtbot: QtBot) -> None:
    write_config(models, everything=False)
    models.script(text("A."), text("B."))
    async with running_app(wait_for_server=False) as desktop:
        chat = desktop.chat
        lst = chat.place.conversations
        first = await _ask(chat, qtbot, "First chat")
        lst.new_button.click()
        await until(lambda: chat.current is not None and chat.current.id != first, 30, "new")
        second = await _ask(chat, qtbot, "Second chat")
        await until(lambda: lst.titles() == ["Second chat", "First chat"], 10, "both rows")
        assert len(models.requests) == 2  # two answers, no title requests

        _menu(chat, first, "Pin")
        await until(lambda: lst.titles() == ["First chat", "Second chat"], 10, "pinned first")
        assert lst.headers()[0] == "Pinned"
        _menu(chat, second, "Archive")
        await until(lambda: lst.titles() == ["First chat"], 10, "archived away")
        lst.archived_button.click()
        await until(lambda: lst.titles() == ["Second chat"], 10, "the archived list")
        _menu(chat, second, "Unarchive")
        await until(lambda: lst.titles() == [], 10, "back in the list")
        lst.archived_button.click()
        await until(lambda: lst.titles() == ["First chat", "Second chat"], 10, "all back")

        lst.select(first)
        lst.list.setFocus()
        qtbot.keyClick(lst.list, Qt.Key.Key_Delete)
        await until(lambda: lst.titles() == ["Second chat"], 10, "deleted")
        assert lst.undo_bar.isVisible() and lst.undo_label.text() == "Deleted “First chat”."
        lst.undo_button.click()
        await until(lambda: "First chat" in lst.titles(), 10, "undone")
        assert not lst.undo_bar.isVisible()

        lst._undo_timer.setInterval(200)  # the Undo goes sooner than a person's 10 s
        lst.select(first)
        qtbot.keyClick(lst.list, Qt.Key.Key_Delete)
        await until(lambda: lst.undo_bar.isVisible(), 10, "the undo bar")
        await until(lambda: not lst.undo_bar.isVisible(), 10, "the undo bar to go")

        def stored() -> int:
            with sqlite3.connect(paths().state_dir / "chats.sqlite3") as conn:
                found = conn.execute("SELECT count(*) FROM conversations WHERE id=?", (first,))
                return int(found.fetchone()[0])

        await until(lambda: stored() == 0, 10, "the deleted chat removed for good")
        assert lst.titles() == ["Second chat"]
