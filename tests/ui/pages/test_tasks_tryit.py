"""Try it with a server that answers with tasks (tests/servers/tasking.py over HTTP, which
outlives the app): the call shows the task's status, Cancel cancels it on the server, and a
task left running when the app quits is listed after the restart and its result fetched."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from portico.ui.app import DesktopApp
from portico.ui.schema_form import NumberSpin
from tests.helpers.servers import RunningServer, start_tasking, stop_server
from tests.ui.pages_helpers import running_app, select, write_global
from tests.ui.qt_helpers import until

pytestmark = pytest.mark.slow  # the app and real servers


@pytest.fixture
def tasking() -> Iterator[RunningServer]:
    server = start_tasking("--poll-ms", "50")
    yield server
    stop_server(server)


async def _tools_of(desktop: DesktopApp) -> object:
    select(desktop, "tasking")
    page = desktop.pages.tools
    await until(
        lambda: page.server == "tasking" and page.row_of("slow_compute") is not None, 30, "tools"
    )
    return page


def _call_slow(page: object, seconds: float) -> None:
    page.select_tool("slow_compute")  # type: ignore[attr-defined]
    spin = page.form.fields["seconds"].widget  # type: ignore[attr-defined]
    assert isinstance(spin, NumberSpin)
    spin.setValue(seconds)
    page.call_button.click()  # type: ignore[attr-defined]


async def test_try_it_follows_cancels_and_after_a_restart_fetches_a_task(
    tasking: RunningServer,
) -> None:
    write_global(f'[mcp.tasking]\nurl = "{tasking.url}"\n')
    async with running_app("tasking") as desktop:
        page: object = await _tools_of(desktop)
        panel = page.task_panel  # type: ignore[attr-defined]
        assert panel.isHidden()  # no tasks yet

        # Cancel: the task is cancelled on the server, and listed as cancelled
        _call_slow(page, 30)
        status = page.call_status  # type: ignore[attr-defined]
        await until(lambda: status.text().startswith("task working… — step"), 30, "task status")
        await until(lambda: panel.list.count() == 1, 10, "the task listed")
        page.cancel_button.click()  # type: ignore[attr-defined]
        await until(lambda: "cancelled" in panel.list.item(0).text(), 10, "listed as cancelled")

        # A task still running when the app quits
        _call_slow(page, 2.5)
        await until(lambda: panel.list.count() == 2, 20, "the second task listed")
        assert panel.list.item(0).text().startswith("slow_compute — working…")

    async with running_app("tasking") as desktop:
        page = await _tools_of(desktop)
        panel = page.task_panel  # type: ignore[attr-defined]
        await until(lambda: panel.list.count() == 2, 20, "the tasks listed again")
        assert not panel.isHidden()
        assert panel.list.item(0).text().startswith("slow_compute — working…")
        assert "cancelled" in panel.list.item(1).text()
        panel.list.setCurrentRow(0)
        panel.fetch_button.click()
        view = page.result_view  # type: ignore[attr-defined]
        await until(lambda: "computed 5 steps" in view.toPlainText(), 30, "the task's result")
        assert page.call_status.text() == "slow_compute (task) returned."  # type: ignore[attr-defined]
        await until(lambda: "completed" in panel.list.item(0).text(), 10, "listed as completed")

        # The server saw the cancel of the first and never one of the second.
        page.select_tool("task_log")  # type: ignore[attr-defined]
        page.call_button.click()  # type: ignore[attr-defined]
        await until(lambda: "{" in view.toPlainText(), 20, "task_log")
        log = json.loads(view.toPlainText().strip())
        assert sorted(status for status, _gets in log.values()) == ["cancelled", "completed"]

        # Dismiss forgets a task
        panel.list.setCurrentRow(1)
        panel.dismiss_button.click()
        await until(lambda: panel.list.count() == 1, 10, "one task left")


async def test_try_it_shows_input_required_and_the_question_goes_to_the_person(
    tasking: RunningServer,
) -> None:
    from portico.ui.dialogs.elicitation_dialog import ElicitationDialog

    write_global(f'[mcp.tasking]\nurl = "{tasking.url}"\n')
    async with running_app("tasking") as desktop:
        page: object = await _tools_of(desktop)
        page.select_tool("confirm_job")  # type: ignore[attr-defined]
        page.call_button.click()  # type: ignore[attr-defined]
        status = page.call_status  # type: ignore[attr-defined]
        assert desktop.prompter is not None
        dialog = await until(lambda: desktop.prompter.current, 30, "the question")  # type: ignore[union-attr]
        assert isinstance(dialog, ElicitationDialog)
        assert status.text() == "task input required — waiting for your answer"
        panel = page.task_panel  # type: ignore[attr-defined]
        await until(
            lambda: (
                panel.list.count() == 1
                and panel.list.item(0).text().startswith("confirm_job — input required")
            ),
            10,
            "the task listed as waiting",
        )
        dialog.accept_button.click()  # the default: ok = true
        view = page.result_view  # type: ignore[attr-defined]
        await until(lambda: 'answer accept {"ok": true}' in view.toPlainText(), 30, "the result")
        await until(lambda: "completed" in panel.list.item(0).text(), 10, "listed as completed")
