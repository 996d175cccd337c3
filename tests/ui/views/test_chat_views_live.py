"""Views in a long transcript, with the real web engine: at most ``chat.live_views`` are
loaded; one scrolled out of sight is paused (its page frozen) and comes back as it was,
handling then what was sent to it meanwhile; one past the limit is unloaded to its
placeholder and, scrolled back, opens afresh with its tool's input and result sent again.
Each view is taller than the window (the person gave it 400 px), so one is in sight at a
time."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWebEngineCore import QWebEnginePage

from portico.paths import paths
from portico.ui.chat.views import ChatView
from tests.helpers.logs import AllowLogs
from tests.servers.model_server import ModelServer, text, tool_call
from tests.ui.chat_helpers import model_server, models, running_app, write_config
from tests.ui.qt_helpers import until
from tests.ui.views.test_chat_views import SMUGGLED, _viewer_running, add_viewer, arrived

pytestmark = pytest.mark.slow  # a real server, the scripted model and the web engine
__all__ = ["model_server", "models"]

CITIES = ["Oslo", "Bergen", "Tromsø", "Bodø"]
LIMIT = 2  # chat.live_views in the test's config: two fewer than the views
Frozen = QWebEnginePage.LifecycleState.Frozen
Active = QWebEnginePage.LifecycleState.Active


def refreshed(calls: Path, city: str) -> int:
    """How many times the server ran the view's refresh for ``city``."""
    return sum(
        1 for c in arrived(calls) if c["tool"] == "refresh" and c["arguments"]["city"] == city
    )


def tool_result(city: str) -> str:
    """What Portico sends a view when its tool's result comes (as the session would)."""
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "method": "ui/notifications/tool-result",
            "params": {
                "content": [{"type": "text", "text": city}],
                "structuredContent": {"city": city},
            },
        }
    )


async def test_views_out_of_sight_are_paused_and_past_the_limit_unloaded(
    models: ModelServer, tmp_path: Path, allow_logs: AllowLogs
) -> None:
    allow_logs(SMUGGLED)
    calls = tmp_path / "calls.jsonl"
    add_viewer(write_config(models, everything=False), calls, trusted=True)
    paths().global_yaml.write_text(f"chat:\n  live_views: {LIMIT}\n")
    paths().state_dir.mkdir(parents=True, exist_ok=True)
    (paths().state_dir / "view-heights.json").write_text(
        json.dumps({'["viewer", "ui://viewer/weather"]': 400})
    )
    models.script(*(tool_call("viewer__show_weather", {"city": c}) for c in CITIES), text("Done."))
    async with running_app(wait_for_server=False) as desktop:
        await _viewer_running(desktop)
        chat = desktop.chat
        desktop.window.resize(900, 500)
        field = chat.composer.input
        QTest.keyClicks(field, "Weather in four cities")
        QTest.keyClick(field, Qt.Key.Key_Return)
        await until(lambda: not chat.running, 60, "the turn to end")
        await until(lambda: len(chat.views.views) == len(CITIES), 30, "four views' places")
        views: list[ChatView] = list(chat.views.views)
        viewport = chat.transcript.viewport()

        async def look_at(view: ChatView) -> None:
            """Scroll until ``view``'s top is the transcript's top; wait for it to run (its
            script called refresh for its city)."""
            city = str(view.arguments["city"])
            before = refreshed(calls, city)
            chat.transcript.ensureWidgetVisible(view, 0, 0)
            chat.views.check()

            def running() -> bool:
                chat.transcript.ensureWidgetVisible(view, 0, 0)  # it grew when it opened
                pane = view.pane
                if not (view.live and pane.ready and pane.web.height() == 400):
                    return False
                return refreshed(calls, city) > before

            await until(running, 60, f"the view of {view.arguments['city']} to run")
            # the others settle out of sight (the next check comes after a scroll)
            chat.views.check()

        for view in views:
            await look_at(view)
            assert chat.views.limit == LIMIT  # the config's chat.live_views
            assert sum(v.live for v in views) <= LIMIT
        assert [refreshed(calls, city) for city in CITIES] == [1] * len(CITIES), arrived(calls)

        def in_sight(view: ChatView) -> bool:
            return chat.views._in_sight(view)

        assert [in_sight(v) for v in views] == [False, False, False, True]
        assert viewport.height() < 400  # one view fills the transcript
        live = [v for v in views if v.live]
        assert len(live) == LIMIT and views[-1] in live
        [paused] = [v for v in live if v is not views[-1]]
        assert paused.pane.frozen and paused.pane.page.lifecycleState() == Frozen
        assert not views[-1].pane.frozen and views[-1].pane.page.lifecycleState() == Active
        unloaded = [v for v in views if not v.live]
        assert unloaded and all(
            v.placeholder.isVisible() and v.pane.opened is None and v.pane.web is None
            for v in unloaded
        )

        # a paused view does not run: what it is sent waits; the view in sight runs at once
        # (both in the one renderer their server's views share)
        paused.pane.bridge.deliver.emit(tool_result("Hammerfest"))
        views[-1].pane.bridge.deliver.emit(tool_result("Alta"))
        await until(lambda: refreshed(calls, "Alta") == 1, 30, "the view in sight to answer")
        assert refreshed(calls, "Hammerfest") == 0

        # back in sight it resumes as it was (the same page, no new session) and answers
        page, opened = paused.pane.page, paused.pane.opened
        chat.transcript.ensureWidgetVisible(paused, 0, 0)
        chat.views.check()
        await until(lambda: refreshed(calls, "Hammerfest") == 1, 30, "the paused view's answer")
        assert paused.pane.page is page and paused.pane.opened is opened
        assert page.lifecycleState() == Active and not paused.pane.frozen
        city = str(paused.arguments["city"])
        assert refreshed(calls, city) == 1  # its own result was not sent again

        # an unloaded view, back in sight, opens afresh: its result is sent again, and its
        # bridge answers as before
        first = views[0]
        assert not first.live
        await look_at(first)  # ... which waits for its refresh, from its result sent again
        assert refreshed(calls, "Oslo") == 2
        assert sum(v.live for v in views) <= LIMIT
        first.pane.bridge.deliver.emit(tool_result("Tromsdalen"))
        await until(lambda: refreshed(calls, "Tromsdalen") == 1, 30, "the reopened view's answer")
        for view in views:
            if view.live and not in_sight(view):
                assert view.pane.frozen and view.pane.page.lifecycleState() == Frozen
            elif not view.live:
                assert view.pane.web is None and view.placeholder.isVisible()
