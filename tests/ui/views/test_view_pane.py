"""An MCP Apps view in Try it, rendered by the real web engine: the view's own script
initializes, gets the tool's result and calls its view-only tool back, and that call
reaches the server only after the person approves it in the app's dialog."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from PySide6.QtWidgets import QLineEdit

from portico.prompts import ApprovalChoice
from portico.ui.dialogs.approval_dialog import ApprovalDialog
from tests.helpers.logs import AllowLogs
from tests.ui.pages_helpers import running_app, select, write_global
from tests.ui.qt_helpers import until

pytestmark = pytest.mark.slow  # a real server and the web engine

VIEWER = Path(__file__).parents[2] / "servers" / "viewer.py"


def arrived(calls: Path) -> list[dict[str, object]]:
    if not calls.exists():
        return []
    return [json.loads(line) for line in calls.read_text().splitlines()]


async def test_a_view_in_try_it_calls_back_through_an_approval(
    tmp_path: Path, allow_logs: AllowLogs
) -> None:
    allow_logs(r"connectDomains entry 'https://x.example; script-src \*' is not a plain origin")
    calls = tmp_path / "calls.jsonl"
    command = json.dumps([sys.executable, str(VIEWER), "--calls", str(calls)])
    write_global(f"[mcp.viewer]\ncommand = {command}\n")
    async with running_app("viewer") as desktop:
        select(desktop, "viewer")
        page = desktop.pages.tools
        await until(
            lambda: page.server == "viewer" and page.row_of("show_weather") is not None, 30, "tools"
        )
        page.select_tool("show_weather")
        city = page.form.fields["city"].widget  # type: ignore[union-attr]
        assert isinstance(city, QLineEdit)
        city.setText("Oslo")
        page.call_button.click()
        dialog = await until(lambda: desktop.prompter.current, 30, "the call's approval")  # type: ignore[union-attr]
        assert isinstance(dialog, ApprovalDialog) and dialog.request.tool == "show_weather"
        dialog.choice_buttons[ApprovalChoice.ONCE].click()
        await until(lambda: "Oslo" in page.result_view.toPlainText(), 30, "the text result")

        pane = page.view_pane
        await until(lambda: pane.opened is not None, 60, "the view to open")
        assert "ui://viewer/weather" in pane.caption.text()
        assert "sends data to https://api.weather.example" in pane.caption.text()
        assert "camera: you will be asked" in pane.caption.text()
        # the view is told the app's theme, as its palette has it
        session = desktop.session.pages.views.session(pane.opened.id)
        dark = pane.palette().window().color().lightness() < 128
        assert session is not None and session.host.theme == ("dark" if dark else "light")

        # the view's script calls refresh; the person is asked, naming the view
        dialog = await until(lambda: desktop.prompter.current, 60, "the view's call approval")  # type: ignore[union-attr]
        assert isinstance(dialog, ApprovalDialog)
        assert dialog.request.tool == "refresh" and dialog.request.arguments == {"city": "Oslo"}
        assert dialog.request.caller is not None and dialog.request.caller.kind == "view"
        assert [c["tool"] for c in arrived(calls)] == ["show_weather"]  # not before the answer
        dialog.choice_buttons[ApprovalChoice.ONCE].click()
        await until(lambda: any(c["tool"] == "refresh" for c in arrived(calls)), 30, "refresh")
        assert arrived(calls)[-1] == {"tool": "refresh", "arguments": {"city": "Oslo"}}
        # the view heard the result and said so (its log message came through the relay)
        await until(
            lambda: any("refreshed Oslo" in text for text in pane.heard), 30, "the view's message"
        )
        assert pane.ready
        # a view that asks to be taller is given the height, up to the limit
        await until(lambda: pane.web.height() == 120, 10, "the view's height")
