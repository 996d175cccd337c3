"""A chat tool card for a call the server answered with a task (tests/servers/tasking.py
over HTTP, which outlives the app): the card shows the task's status; after the app quits
mid-task and starts again, the reopened chat's card shows the task and Fetch result
brings its result."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from portico.config.document import ConfigDocument
from portico.runtime.events import Status
from portico.ui.app import DesktopApp
from portico.ui.chat.tool_card import ToolCard
from tests.helpers.servers import RunningServer, start_tasking, stop_server
from tests.servers.model_server import ModelServer, tool_call
from tests.ui.chat_helpers import model_server, models, running_app, write_config
from tests.ui.qt_helpers import until

pytestmark = pytest.mark.slow  # the app and real servers
__all__ = ["model_server", "models"]


@pytest.fixture
def tasking() -> Iterator[RunningServer]:
    server = start_tasking("--poll-ms", "50")
    yield server
    stop_server(server)


async def _tasking_runs(desktop: DesktopApp) -> None:
    def running() -> bool:
        state = desktop.model.state("tasking")
        return state is not None and state.status is Status.RUNNING

    await until(running, 60, "the tasking server to run")


def _card(desktop: DesktopApp) -> ToolCard | None:
    return next((c for c in desktop.chat.cards.values() if c.state.tool == "slow_compute"), None)


async def test_a_tool_card_shows_the_task_and_fetches_its_result_after_a_restart(
    models: ModelServer, tasking: RunningServer, qtbot: QtBot
) -> None:
    path = write_config(models, everything=False)
    doc = ConfigDocument.open(path)
    doc.add_server("tasking", {"url": tasking.url})
    doc.save()
    models.script(tool_call("tasking__slow_compute", {"seconds": 2.5}))

    async with running_app(wait_for_server=False) as desktop:
        await _tasking_runs(desktop)
        field = desktop.chat.composer.input
        qtbot.keyClicks(field, "Compute it")
        qtbot.keyClick(field, Qt.Key.Key_Return)
        card = await until(lambda: _card(desktop), 30, "the card")
        await until(lambda: card.task_label.text().startswith("Task working…"), 30, "task line")
        assert not card.task_label.isHidden()
        assert card.fetch_button.isHidden()  # it is being followed
        assert desktop.chat.current is not None
        conversation = desktop.chat.current.id
        # the app quits while the task runs

    async with running_app(wait_for_server=False) as desktop:
        await _tasking_runs(desktop)
        await desktop.chat.open(conversation)
        card = await until(lambda: _card(desktop), 30, "the card again")
        assert card.task_label.text().startswith("Task working…")
        assert card.task_label.text().endswith("Portico was closed while it ran")
        assert not card.fetch_button.isHidden()
        card.fetch_button.click()
        await until(lambda: card.state.outcome == "ok", 30, "the fetched result")
        assert card.result_text is not None and card.result_text.text() == "computed 5 steps"
        assert card.task_label.text() == "Task completed — result fetched"
        assert card.fetch_button.isHidden()
