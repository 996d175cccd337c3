"""MCP Apps views in the chat, rendered by the real web engine: the model calls
show_weather, the view appears under its card, calls refresh back through the app's
approval (as the view, with the chat's context), gives the model context for the next
turn, floats in a window kept on top and back, and its ui/message is the person's next
message in that chat. And the transcript keeps at most three views live."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from portico.config.document import ConfigDocument
from portico.prompts import ApprovalChoice
from portico.runtime.events import Status
from portico.ui.chat.views import ChatView
from portico.ui.dialogs.approval_dialog import ApprovalDialog
from tests.helpers.logs import AllowLogs
from tests.servers.model_server import text, tool_call
from tests.ui.chat_helpers import model_server, models, running_app, write_config
from tests.ui.qt_helpers import until

pytestmark = pytest.mark.slow  # a real server, the scripted model and the web engine
__all__ = ["model_server", "models"]

VIEWER = Path(__file__).parents[2] / "servers" / "viewer.py"
SMUGGLED = r"connectDomains entry 'https://x.example; script-src \*' is not a plain origin"


def arrived(calls: Path) -> list[dict[str, Any]]:
    if not calls.exists():
        return []
    return [json.loads(line) for line in calls.read_text().splitlines()]


def add_viewer(path: Path, calls: Path, *extra: str, trusted: bool = False) -> None:
    doc = ConfigDocument.open(path)
    spec: dict[str, Any] = {
        "command": sys.executable,
        "args": [str(VIEWER), "--calls", str(calls), *extra],
    }
    if trusted:
        spec["trust"] = "full"
    doc.add_server("viewer", spec)
    doc.save()


async def _viewer_running(desktop: Any) -> None:
    def running() -> bool:
        state = desktop.model.state("viewer")
        return state is not None and state.status is Status.RUNNING

    await until(running, 60, "the viewer server to run")


def views_of(desktop: Any) -> list[ChatView]:
    return list(desktop.chat.views.views)


@pytest.mark.parametrize("mode", ["pip", "fullscreen"])
async def test_a_view_under_its_card_calls_back_and_talks_to_the_chat(
    models, qtbot: QtBot, tmp_path: Path, allow_logs: AllowLogs, mode: str
) -> None:
    allow_logs(SMUGGLED)
    calls = tmp_path / "calls.jsonl"
    add_viewer(write_config(models, everything=False), calls, "--chat", mode)
    models.script(
        tool_call("viewer__show_weather", {"city": "Oslo"}),
        text("It is 21 degrees in Oslo."),
        text("Oslo is the capital of Norway."),
    )
    async with running_app(wait_for_server=False) as desktop:
        await _viewer_running(desktop)
        chat = desktop.chat
        field = chat.composer.input
        qtbot.keyClicks(field, "Weather in Oslo?")
        qtbot.keyClick(field, Qt.Key.Key_Return)

        card = await until(
            lambda: next((c for c in chat.cards.values() if c.state.tool == "show_weather"), None),
            30,
            "the show_weather card",
        )
        await until(lambda: card.approval is not None, 30, "the call's inline approval")
        card.approval.buttons[ApprovalChoice.ONCE].click()
        await until(lambda: card.state.outcome == "ok", 30, "the call to finish")

        view = await until(lambda: next(iter(views_of(desktop)), None), 30, "the view's place")
        assert view.parent() is card  # under the card
        assert view.uri == "ui://viewer/weather"
        await until(lambda: view.pane.opened is not None, 60, "the view to open")
        assert view.live and not view.placeholder.isVisible()
        assert "ui://viewer/weather" in view.pane.caption.text()

        # the view's refresh: the app's approval dialog, naming the view, before it runs
        dialog = await until(lambda: desktop.prompter.current, 60, "the view's call approval")  # type: ignore[union-attr]
        assert isinstance(dialog, ApprovalDialog)
        assert dialog.request.tool == "refresh" and dialog.request.arguments == {"city": "Oslo"}
        assert dialog.request.caller is not None and dialog.request.caller.kind == "view"
        assert [c["tool"] for c in arrived(calls)] == ["show_weather"]
        dialog.choice_buttons[ApprovalChoice.ONCE].click()
        await until(lambda: any(c["tool"] == "refresh" for c in arrived(calls)), 30, "refresh")

        # the view floats in a window kept on top (or fills the screen), and the mode it
        # asked for is the one it is told it got
        pane = view.pane
        window = await until(lambda: pane.window_of_mode, 30, "the view's window")
        assert window.mode == mode and window.isVisible()
        if mode == "pip":
            assert window.windowFlags() & Qt.WindowType.WindowStaysOnTopHint
        else:
            assert window.windowState() & Qt.WindowState.WindowFullScreen
        assert pane.web.parent() is window
        await until(lambda: any(f"mode {mode}" in t for t in pane.heard), 30, "the mode it got")

        # its ui/message is the person's next message in this chat, with the view's context
        await until(lambda: len(models.requests) >= 3, 60, "the next turn's request")
        await until(lambda: not chat.running, 60, "the turn to end")

        def asked() -> list[str]:
            return [m.text for m in chat.transcript.messages if m.role == "user"]

        # the transcript shows the turn's messages on its own time after the turn ends
        await until(lambda: len(asked()) == 2, 30, "the view's message in the transcript")
        assert asked() == ["Weather in Oslo?", "Tell me more about Oslo"]
        system = json.dumps(models.requests[-1].body)
        assert "Oslo: 21 degrees, seen in the view" in system
        assert "Oslo: 21 degrees" not in json.dumps(models.requests[0].body)
        notices = [w.text() for w in chat.pane.findChildren(type(pane.caption))]
        assert any("updated the context the model gets next turn" in n for n in notices)

        # closing the floating window brings the view back inline
        window.close()
        await until(lambda: pane.window_of_mode is None, 10, "the view back inline")
        assert pane.display_mode == "inline" and pane.web.parent() is pane


async def test_at_most_three_views_are_live_and_the_rest_wait_as_placeholders(
    models, qtbot: QtBot, tmp_path: Path, allow_logs: AllowLogs
) -> None:
    allow_logs(SMUGGLED)
    calls = tmp_path / "calls.jsonl"
    add_viewer(write_config(models, everything=False), calls, trusted=True)
    cities = ["Oslo", "Bergen", "Tromsø", "Bodø", "Narvik"]
    models.script(
        *(tool_call("viewer__show_weather", {"city": c}) for c in cities), text("Five cities.")
    )
    async with running_app(wait_for_server=False) as desktop:
        await _viewer_running(desktop)
        chat = desktop.chat
        chat.views.limit = 3
        field = chat.composer.input
        qtbot.keyClicks(field, "Weather in five cities")
        qtbot.keyClick(field, Qt.Key.Key_Return)
        await until(lambda: not chat.running, 60, "the turn to end")
        await until(lambda: len(views_of(desktop)) == 5, 30, "five views' places")
        views = views_of(desktop)
        desktop.window.resize(900, 4000)  # every card in sight: only three may run
        for view in views[1:]:
            view.suspend()
        chat.views.live = chat.views.live[:1]
        chat.views.check()
        # one view opened per check (each costs the GUI a web view and a page), the next
        # a moment later: not all of them in one stall of the scroll
        assert sum(v.live for v in views) <= 2
        await until(lambda: sum(v.live for v in views) == 3, 30, "three live views")
        assert len(chat.views.live) == 3

        def settled() -> bool:
            waiting = [v for v in views if not v.live]
            return len(waiting) == 2 and all(
                v.placeholder.isVisible() and v.pane.opened is None and v.pane.web is None
                for v in waiting
            )

        await until(settled, 10, "two views waiting as placeholders, no web view")
        assert sum(v.live for v in views) == 3

        # a short window: scrolling to the last view suspends one out of sight
        desktop.window.resize(900, 500)
        bar = chat.transcript.verticalScrollBar()
        await until(lambda: bar.maximum() > 0, 10, "a scrollable transcript")
        chat.transcript.ensureWidgetVisible(views[-1])
        chat.views.check()
        await until(lambda: views[-1].live, 30, "the last view to open")
        assert sum(v.live for v in views) <= 3
        suspended = [v for v in views[:3] if not v.live]
        assert suspended and all(v.placeholder.isVisible() for v in suspended)
        assert all(v.pane.opened is None and v.pane.web is None for v in suspended)
