"""The Tools and Overview tabs against the real app, hub, policy and a real stdio server."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage, QPalette
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QLineEdit

from portico.prompts import ApprovalChoice
from portico.ui.dialogs.approval_dialog import ApprovalDialog
from tests.ui.pages_helpers import SHOWCASE, running_app, select, write_global
from tests.ui.qt_helpers import gone, until

pytestmark = pytest.mark.slow  # talks to real servers or processes


async def test_tools_tab_lists_filters_and_tries_tools_through_the_policy() -> None:
    config = write_global(SHOWCASE)
    async with running_app("showcase") as desktop:
        pages = desktop.pages
        select(desktop, "showcase")
        page = pages.tools
        await until(lambda: page.server == "showcase" and len(page.tools) == 10, 30, "tools")
        names = [t.name for t in page.tools]
        # the server's tools, the filtered-out one, then Portico's utility tools
        assert names[:6] == ["lookup", "delete_item", "chart", "stats", "tagged", "secret"]
        assert {t.name for t in page.tools[6:]} == {
            "list_resources",
            "read_resource",
            "list_prompts",
            "get_prompt",
        }
        assert "Portico utility" in page.cell(6, 2)
        # the tab says what its rows are, in the list's words (it said "5 tools", the tab
        # showed 10 rows without a word: issue 26, item 14)
        row = desktop.model.index(desktop.model.row_of("showcase"))  # type: ignore[arg-type]
        assert row.data(Qt.ItemDataRole.DisplayRole).endswith(" · 5 tools")
        assert page.counts.isVisibleTo(page)
        assert page.counts.text() == "5 tools + 4 Portico utility tools + 1 filtered out"
        secret = page.tools[5]
        assert secret.filtered_reason == "excluded by tools.exclude entry 'secret'"
        index = page.model.index(5, 0)
        grey = page.palette().color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text)
        assert index.data(Qt.ItemDataRole.ForegroundRole).color() == grey
        assert "excluded by tools.exclude" in index.data(Qt.ItemDataRole.ToolTipRole)
        assert "Filtered out" in page.cell(5, 1)

        # annotations as badges, the schema in words
        lookup = page.row_of("lookup")
        assert page.cell(lookup, 2) == "read-only, idempotent"  # type: ignore[arg-type]
        assert page.cell(page.row_of("delete_item"), 2) == "destructive"  # type: ignore[arg-type]
        page.select_tool("tagged")
        details = page.details.toPlainText()
        assert "tags" in details and "array of string" in details and "required" in details
        assert "object or null" in details and "optional" in details

        # a filtered tool cannot be tried
        page.select_tool("secret")
        assert not page.try_box.isEnabled()

        # a read-only tool runs without asking
        page.select_tool("lookup")
        form = page.form
        assert form is not None and form.fields["query"].label == "Query *"
        page.call_button.click()  # query missing: nothing is called
        assert "Please fill in: Query" in page.result_view.toPlainText()
        query = form.fields["query"].widget
        assert isinstance(query, QLineEdit)
        query.setText("pears")
        QTest.keyClick(query, Qt.Key.Key_Return)  # Enter submits the form
        assert page.call_status.text() == "Calling lookup…"  # read-only: no approval hint
        await until(lambda: "found 5 for pears" in page.result_view.toPlainText(), 30, "lookup")
        assert desktop.prompter.current is None  # type: ignore[union-attr]
        await until(lambda: page.call_button.isEnabled(), 10, "Call enabled again")

        # a destructive tool asks first; Allow Once runs it
        page.select_tool("delete_item")
        widget = page.form.fields["item_id"].widget  # type: ignore[union-attr]
        assert isinstance(widget, QLineEdit)
        widget.setText("42")
        page.call_button.click()
        hinted = "Calling delete_item… (you may be asked to approve it)"
        await until(lambda: page.call_status.text() == hinted, 10, "the approval hint")
        dialog = await until(lambda: desktop.prompter.current, 30, "the approval dialog")  # type: ignore[union-attr]
        assert isinstance(dialog, ApprovalDialog)
        assert dialog.request.tool == "delete_item" and dialog.request.arguments == {
            "item_id": "42"
        }
        dialog.choice_buttons[ApprovalChoice.ONCE].click()
        await until(lambda: "deleted 42" in page.result_view.toPlainText(), 30, "delete result")
        assert gone(dialog) and not page.result_view.is_error

        # Deny: the person's own decision, said to them (not a server error, not to a model)
        page.call_button.click()
        dialog = await until(lambda: desktop.prompter.current, 30, "the second approval")  # type: ignore[union-attr]
        dialog.choice_buttons[ApprovalChoice.DENY].click()
        await until(lambda: "denied" in page.result_view.toPlainText(), 30, "the denial")
        assert page.result_view.toPlainText().strip() == "You denied this call, so it was not run."
        assert page.call_status.text() == "Not run."
        assert page.result_view.is_error

        # Allow for Session: the same call again neither asks nor says it may (issue 26,
        # item 17: Try it kept saying "you may be asked to approve it")
        page.call_button.click()
        dialog = await until(lambda: desktop.prompter.current, 30, "the third approval")  # type: ignore[union-attr]
        dialog.choice_buttons[ApprovalChoice.SESSION].click()
        await until(lambda: "deleted 42" in page.result_view.toPlainText(), 30, "allowed")
        await until(lambda: page.call_button.isEnabled(), 10, "Call enabled again")
        page.call_button.click()
        statuses = [page.call_status.text()]
        for _ in range(3000):  # 30 s at most
            if "deleted 42" in page.result_view.toPlainText():
                break
            await asyncio.sleep(0.01)
            statuses.append(page.call_status.text())
        assert statuses[0] == "Calling delete_item…"
        assert not any("may be asked" in text for text in statuses), statuses
        assert desktop.prompter.current is None  # type: ignore[union-attr]
        await until(lambda: page.call_button.isEnabled(), 10, "Call enabled again")

        # an image result renders; structured content is shown
        page.select_tool("chart")
        page.call_button.click()
        dialog = await until(lambda: desktop.prompter.current, 30, "chart approval")  # type: ignore[union-attr]
        dialog.choice_buttons[ApprovalChoice.ONCE].click()
        await until(lambda: page.result_view.images, 30, "the chart image")
        image = page.result_view.images[0]
        assert (image.width(), image.height()) == (16, 8)
        assert image.pixelColor(3, 3).red() > 200 and image.pixelColor(3, 3).blue() < 60
        assert "a red chart" in page.result_view.toPlainText()
        # and it is drawn in the result view, not only decoded
        desktop.window.page.setCurrentWidget(page)
        shot = page.result_view.viewport().grab().toImage()
        red = [
            (x, y)
            for x in range(0, min(shot.width(), 200), 2)
            for y in range(0, min(shot.height(), 120), 2)
            if shot.pixelColor(x, y).red() > 200 and shot.pixelColor(x, y).green() < 80
        ]
        assert len(red) > 50, "the chart is not drawn"

        page.select_tool("stats")
        page.call_button.click()
        dialog = await until(lambda: desktop.prompter.current, 30, "stats approval")  # type: ignore[union-attr]
        dialog.choice_buttons[ApprovalChoice.ONCE].click()
        await until(lambda: "Structured content" in page.result_view.toPlainText(), 30, "stats")
        assert '"mean": 1.5' in page.result_view.toPlainText()

        # array and object parameters take JSON; bad JSON is caught before calling
        page.select_tool("tagged")
        fields = page.form.fields  # type: ignore[union-attr]
        fields["tags"].widget.setText("[oops")  # type: ignore[attr-defined]
        page.call_button.click()
        assert "Tags: not valid JSON" in page.result_view.toPlainText()

        # the Overview tab: transport, command, protocol, server info, source, timings
        desktop.window.page.setCurrentWidget(pages.overview)
        await until(lambda: "Last call" in pages.overview.table.text(), 10, "overview")
        text = pages.overview.table.text()
        assert "showcase.py" in text and "stdio" in text
        assert f"{config}:2" in text  # the [mcp.showcase] line
        assert re.search(r"Protocol version</b></td><td[^>]*>20\d\d-\d\d-\d\d<", text), text
        assert "Server info" in text and "showcase" in text
        assert "Connect time" in text
        pages.refresh()
        await until(lambda: " s ago)" in pages.overview.table.text().split("Last call")[1], 10)
        assert (
            pages.overview.table.textInteractionFlags()
            & Qt.TextInteractionFlag.TextSelectableByMouse
        )


def test_screenshot_script_renders_the_tools_tab(tmp_path: Path) -> None:
    script = Path(__file__).parents[1] / "pages_screenshot.py"
    proc = subprocess.run(
        [sys.executable, str(script), str(tmp_path)], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    image = QImage(str(tmp_path / "main-window-tools.png"))
    assert image.width() >= 1000 and image.height() >= 600
