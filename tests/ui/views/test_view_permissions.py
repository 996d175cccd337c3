"""A view's permissions in the real web engine (Try it): one its resource declares
reaches the person as a question naming the view (its frame is delegated the feature
and runs at an origin of its own, so the engine asks instead of refusing); one it did
not declare is refused without a question."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from PySide6.QtWidgets import QLineEdit

from portico.ui.dialogs.elicitation_dialog import ElicitationDialog
from portico.ui.servers_place import ServerPage
from tests.helpers.logs import AllowLogs
from tests.ui.pages_helpers import running_app, select, write_global
from tests.ui.qt_helpers import until

pytestmark = pytest.mark.slow  # a real server and the web engine

VIEWER = Path(__file__).parents[2] / "servers" / "viewer.py"
SMUGGLED = r"connectDomains entry 'https://x.example; script-src \*' is not a plain origin"


@pytest.mark.parametrize("declared", [True, False], ids=["declared", "undeclared"])
async def test_a_views_location_is_asked_of_the_person_only_when_declared(
    tmp_path: Path, allow_logs: AllowLogs, declared: bool
) -> None:
    allow_logs(SMUGGLED)
    args = [sys.executable, str(VIEWER), "--locate"]
    if declared:
        args.append("--declare-location")
    write_global(f"[mcp.viewer]\ncommand = {json.dumps(args)}\ntrust = 'full'\n")
    async with running_app("viewer") as desktop:
        select(desktop, "viewer")
        page = desktop.pages.tools
        tabs = desktop.window.findChild(ServerPage)
        assert tabs is not None
        tabs.tabBar().setCurrentIndex(tabs.indexOf(page))  # the person opens Tools: the
        # engine asks about a permission only for a page in sight
        await until(
            lambda: page.server == "viewer" and page.row_of("show_weather") is not None, 30, "tools"
        )
        page.select_tool("show_weather")
        city = page.form.fields["city"].widget  # type: ignore[union-attr]
        assert isinstance(city, QLineEdit)
        city.setText("Oslo")
        page.call_button.click()
        pane = page.view_pane
        await until(lambda: pane.ready, 60, "the view to start")
        assert pane.isVisible()

        def located() -> list[str]:
            return [t for t in pane.heard if "location: " in t]

        if declared:
            dialog = await until(lambda: desktop.prompter.current, 60, "the location question")  # type: ignore[union-attr]
            assert isinstance(dialog, ElicitationDialog)
            assert "ui://viewer/weather" in dialog.request.message
            assert "your location" in dialog.request.message
            assert located() == []  # the view waits for the person
            dialog.decline_button.click()
            await until(located, 30, "the view to hear the answer")
            assert "location: denied" in located()[0]
            assert pane.page.refused == ["permission geolocation"]
        else:
            await until(located, 60, "the view to hear it was refused")
            assert "location: denied" in located()[0]
            assert desktop.prompter.current is None  # type: ignore[union-attr]


def test_a_servers_profile_is_its_own_off_the_record_and_keeps_no_answer(qapp: object) -> None:
    """All of a server's views share one origin: an answer the profile kept for one view
    would be given to the next without a question."""
    from PySide6.QtCore import QObject
    from PySide6.QtWebEngineCore import QWebEngineProfile

    from portico.ui.views.engine import profile_for

    anchor = QObject()
    profile = profile_for(anchor, "viewer", ())
    assert profile.isOffTheRecord()
    policy = QWebEngineProfile.PersistentPermissionsPolicy.AskEveryTime
    assert profile.persistentPermissionsPolicy() == policy
    assert profile_for(anchor, "viewer", ()) is profile
    assert profile_for(anchor, "other", ()) is not profile
