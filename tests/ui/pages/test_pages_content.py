"""The Prompts, Resources and Log tabs against the real app and a real stdio server."""

from __future__ import annotations

import pytest

from tests.ui.pages_helpers import SHOWCASE, command, running_app, select, write_global
from tests.ui.qt_helpers import until

pytestmark = pytest.mark.slow  # talks to real servers or processes

CONFIG = (
    SHOWCASE
    + f"""
[mcp.talker]
command = {command("toolbox.py", "stdio", "--stderr-lines", "3")}

[mcp.quiet]
command = {command("tiny.py")}
"""
)


async def test_prompts_resources_and_log_search() -> None:
    write_global(CONFIG)
    async with running_app("showcase", "talker", "quiet") as desktop:
        pages = desktop.pages
        tabs = desktop.window.page
        select(desktop, "showcase")

        # Prompts: listed with arguments, Get shows the messages
        tabs.setCurrentWidget(pages.prompts)
        prompts = pages.prompts
        await until(lambda: prompts.prompts, 30, "the prompt list")
        assert prompts.model.text(0, 0) == "review(code*, language)"
        assert set(prompts.fields) == {"code", "language"}
        prompts.get_button.click()  # code is required
        assert "Please fill in: code" in prompts.result_view.toPlainText()
        prompts.fields["code"].setText("x = 1")
        prompts.fields["language"].setText("toml")
        prompts.get_button.click()
        await until(
            lambda: "Please review this toml code: x = 1" in prompts.result_view.toPlainText(),
            30,
            "the prompt messages",
        )
        assert "[user]" in prompts.result_view.toPlainText()

        # Resources: text, an image, and a template filled in
        tabs.setCurrentWidget(pages.resources)
        res = pages.resources
        await until(lambda: res.resources, 30, "the resource list")
        assert res.status.text() == "2 resource(s), 1 template(s)"
        res.select_uri("showcase://notes")
        res.read_button.click()
        await until(lambda: "line two" in res.result_view.toPlainText(), 30, "the notes")
        res.select_uri("showcase://logo.png")
        res.read_button.click()
        await until(lambda: res.result_view.images, 30, "the logo")
        logo = res.result_view.images[0]
        assert logo.width() == 8 and logo.pixelColor(1, 1).blue() > 200
        res.select_uri("showcase://items/{item_id}")
        assert "template" in res.result_view.toPlainText()
        res.read_button.click()
        assert "Fill in the parts" in res.result_view.toPlainText()
        res.address.setText("showcase://items/7")
        res.read_button.click()
        await until(lambda: "item 7" in res.result_view.toPlainText(), 30, "the item")

        # a server without the prompts / resources capability is not asked for them
        select(desktop, "quiet")
        await until(lambda: res.status.text() == "This server offers no resources.", 30, "none")
        tabs.setCurrentWidget(pages.prompts)
        await until(lambda: prompts.status.text() == "This server offers no prompts.", 30, "none")

        # Log: the server's stderr, searchable with next / previous and highlights
        select(desktop, "talker")
        tabs.setCurrentWidget(pages.log.parentWidget())
        log = pages.log
        await until(lambda: "toolbox stderr line 2" in log.view.toPlainText(), 30, "stderr lines")
        log.search.setText("stderr line")
        assert log.matches == 3 and log.count_label.text() == "3 matches"
        assert len(log.view.extraSelections()) == 3
        assert log.selected_line().endswith("  toolbox stderr line 0")  # after its time
        assert log.find_next() and log.selected_line().endswith("toolbox stderr line 1")
        assert log.find_previous() and log.selected_line().endswith("toolbox stderr line 0")
        assert log.find_previous() and log.selected_line().endswith("stderr line 2")  # wraps
        log.search.setText("no such text")
        assert log.matches == 0 and not log.view.extraSelections()
        # live lines are highlighted as they arrive
        log.search.setText("stderr line")
        before = log.matches
        from portico.runtime.events import LogLine

        desktop.window.add_log_line(LogLine("talker", "one more stderr line"))
        assert log.matches == before + 1
