"""Views that follow the hub's events and the one clock, and Try it's long calls: against
real servers (the showcase test server and server-everything over stdio)."""

from __future__ import annotations

import asyncio

import pytest
from PySide6.QtWidgets import QApplication

from portico.runtime.results import ResourcePart, ToolResult
from portico.ui.pages.result_view import ResultView
from portico.ui.schema_form import SchemaForm
from tests.helpers.servers import EVERYTHING, NODE
from tests.ui.pages_helpers import SHOWCASE, running_app, select, write_global
from tests.ui.qt_helpers import until

pytestmark = pytest.mark.slow  # real servers, processes or the app


async def test_one_tool_count_everywhere_and_the_overview_ticks() -> None:
    write_global(SHOWCASE)  # six tools, one excluded by tools.exclude
    async with running_app("showcase") as desktop:
        select(desktop, "showcase")
        pages = desktop.pages
        await until(lambda: len(pages.tools.tools) >= 6, 30, "the tools page")
        offered = [t for t in pages.tools.tools if not t.filtered_reason and not t.utility]
        state = desktop.model.state("showcase")
        assert state is not None and state.tool_count == len(offered) == 5
        assert desktop.model.index(0).data().endswith("Running · 5 tools")
        assert desktop.window.summary_label.text() == "1 server: 1 running; 5 tools"
        assert "<b>Tools</b></td><td style='white-space:pre-wrap'>5<" in (
            pages.overview.table.text()
        )
        # "Connected (N s ago)" moves on with the clock, without another fetch
        desktop.window.show_servers("showcase")
        desktop.window.page.setCurrentWidget(pages.overview)
        await until(lambda: "s ago)" in pages.overview.table.text(), 10, "the connected time")
        first = pages.overview.table.text()
        await until(lambda: pages.overview.table.text() != first, 5, "the time to move on")


@pytest.mark.skipif(not EVERYTHING.exists(), reason="npm peers not installed")
async def test_a_long_call_shows_progress_and_can_be_cancelled() -> None:
    write_global(
        f'[mcp.everything]\ncommand = "{NODE}"\nargs = ["{EVERYTHING}", "stdio"]\ntrust = "full"\n'
    )
    async with running_app("everything") as desktop:
        select(desktop, "everything")
        tools = desktop.pages.tools
        name = "trigger-long-running-operation"
        await until(lambda: tools.row_of(name) is not None, 30, "everything's tools")
        tools.select_tool(name)
        form = tools.form
        assert form is not None
        form.fields["duration"].widget.setValue(20)  # type: ignore[attr-defined]
        form.fields["steps"].widget.setValue(20)  # type: ignore[attr-defined]
        tools.call_button.click()
        assert not tools.call_button.isEnabled() and tools.cancel_button.isVisibleTo(tools)
        await until(lambda: tools.progress.maximum() == 1000 and tools.progress.value() > 0, 20)
        assert "/ 20" in tools.progress.format()
        # another tool can be tried meanwhile: Call is not stuck greyed
        tools.select_tool("echo")
        assert tools.call_button.isEnabled() and not tools.cancel_button.isVisibleTo(tools)
        tools.select_tool(name)
        assert tools.cancel_button.isVisibleTo(tools)
        tools.cancel_button.click()
        await until(lambda: tools.running is None, 10, "the call to end")
        assert tools.call_status.text().startswith("Cancelled")
        assert tools.call_button.isEnabled() and not tools.cancel_button.isVisibleTo(tools)
        # the server was told: the activity shows the cancellation notification
        await asyncio.sleep(0.3)
        log = desktop.session.hub.connection("everything").activity
        sent = await desktop.runtime.submit(_methods(log))
        assert "notifications/cancelled" in sent


async def _methods(log: object) -> list[str]:
    return [e.method for e in log.snapshot()]  # type: ignore[attr-defined]


def test_number_fields_read_plainly_and_text_blobs_show_as_text() -> None:
    QApplication.instance() or QApplication([])
    form = SchemaForm(
        {"type": "object", "properties": {"limit": {"type": "number", "default": 100}}}
    )
    spin = form.fields["limit"].widget
    assert spin.text() == "100"  # type: ignore[attr-defined]
    spin.setValue(0.25)  # type: ignore[attr-defined]
    assert spin.text() == "0.25"  # type: ignore[attr-defined]
    view = ResultView()
    view.show_result(
        ToolResult(
            (ResourcePart("file:///notes.txt", "text/plain", None, "héllo\nworld".encode()),)
        )
    )
    assert "héllo" in view.toPlainText() and "binary content" not in view.toPlainText()
