"""A stored chat reopened shows the view of a call whose tool has one: a placeholder
under the stored card, then the view read again from its connected server and given
the stored result (the tool is not run again)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot

from portico.config.document import ConfigDocument
from portico.runtime.events import Status
from tests.helpers.logs import AllowLogs
from tests.servers.model_server import text, tool_call
from tests.ui.chat_helpers import model_server, models, running_app, write_config
from tests.ui.qt_helpers import until

pytestmark = pytest.mark.slow  # a real server, the scripted model and the web engine
__all__ = ["model_server", "models"]

VIEWER = Path(__file__).parents[2] / "servers" / "viewer.py"
SMUGGLED = r"connectDomains entry 'https://x.example; script-src \*' is not a plain origin"


def arrived(calls: Path) -> list[str]:
    if not calls.exists():
        return []
    return [json.loads(line)["tool"] for line in calls.read_text().splitlines()]


async def test_a_reopened_chat_shows_its_views_again(
    models: Any, qtbot: QtBot, tmp_path: Path, allow_logs: AllowLogs
) -> None:
    allow_logs(SMUGGLED)
    calls = tmp_path / "calls.jsonl"
    path = write_config(models, everything=False)
    doc = ConfigDocument.open(path)
    args = [str(VIEWER), "--calls", str(calls)]
    doc.add_server("viewer", {"command": sys.executable, "args": args, "trust": "full"})
    doc.save()
    models.script(tool_call("viewer__show_weather", {"city": "Oslo"}), text("Oslo."))
    async with running_app(wait_for_server=False) as desktop:

        def running() -> bool:
            state = desktop.model.state("viewer")
            return state is not None and state.status is Status.RUNNING

        await until(running, 60, "the viewer server to run")
        chat = desktop.chat
        qtbot.keyClicks(chat.composer.input, "Weather in Oslo?")
        qtbot.keyClick(chat.composer.input, Qt.Key.Key_Return)
        await until(lambda: not chat.running, 60, "the turn to end")
        first = await until(lambda: next(iter(chat.views.views), None), 30, "the view's place")
        await until(lambda: "refresh" in arrived(calls), 60, "the live view's refresh")
        stored_id = chat.current.id

        await chat.new_chat()
        assert chat.current.id != stored_id and chat.views.views == []
        await chat.open(stored_id)

        view = await until(lambda: next(iter(chat.views.views), None), 30, "the view again")
        assert view is not first and view.uri == "ui://viewer/weather"
        card = next(c for c in chat.cards.values() if c.state.tool == "show_weather")
        assert view.parent() is card
        await until(lambda: view.pane.ready, 60, "the view to open again")
        # it got the stored result (the city, from the stored JSON text) and calls back
        await until(lambda: any("refreshed Oslo" in t for t in view.pane.heard), 60, "its refresh")
        assert arrived(calls).count("show_weather") == 1  # the tool itself is not run again


async def test_a_reopened_chat_whose_view_server_is_gone_says_so(
    models: Any, qtbot: QtBot, tmp_path: Path, allow_logs: AllowLogs
) -> None:
    allow_logs(SMUGGLED)
    path = write_config(models, everything=False)
    doc = ConfigDocument.open(path)
    args = [str(VIEWER), "--calls", str(tmp_path / "calls.jsonl")]
    doc.add_server("viewer", {"command": sys.executable, "args": args, "trust": "full"})
    doc.save()
    models.script(tool_call("viewer__show_weather", {"city": "Oslo"}), text("Oslo."))
    async with running_app(wait_for_server=False) as desktop:

        def status() -> Status | None:
            state = desktop.model.state("viewer")
            return None if state is None else state.status

        await until(lambda: status() is Status.RUNNING, 60, "the viewer server to run")
        chat = desktop.chat
        qtbot.keyClicks(chat.composer.input, "Weather in Oslo?")
        qtbot.keyClick(chat.composer.input, Qt.Key.Key_Return)
        await until(lambda: not chat.running, 60, "the turn to end")
        await until(lambda: next(iter(chat.views.views), None), 30, "the view's place")
        stored_id = chat.current.id

        doc = ConfigDocument.open(path)
        doc.remove_server("viewer")
        doc.save()
        await until(lambda: status() is None, 60, "the viewer server to go with the config")
        await chat.new_chat()
        await chat.open(stored_id)

        card = await until(
            lambda: next((c for c in chat.cards.values() if c.state.tool == "show_weather"), None),
            30,
            "the stored card",
        )
        note = await until(
            lambda: next(
                (w for w in card.findChildren(QLabel) if w.accessibleName() == "view unavailable"),
                None,
            ),
            30,
            "the note that the view cannot be shown",
        )
        assert "ui://viewer/weather" in note.text() and "viewer is not connected" in note.text()
        assert chat.views.views == []  # no placeholder that could never open
