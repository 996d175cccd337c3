"""A view's height, set by the person with the grip under it: kept when the view asks
for another height, remembered for that view (its server and resource) when it opens
again and after a restart; before that, the view's own size requests are honoured
within the limit."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QEvent, QPointF, Qt
from PySide6.QtGui import QMouseEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QLineEdit, QWidget

from portico.paths import paths
from portico.ui.servers_place import ServerPage
from portico.ui.views.view_pane import MAX_HEIGHT, ViewPane
from tests.helpers.logs import AllowLogs
from tests.ui.pages_helpers import running_app, select, write_global
from tests.ui.qt_helpers import until

pytestmark = pytest.mark.slow  # a real server and the web engine

VIEWER = Path(__file__).parents[2] / "servers" / "viewer.py"
SMUGGLED = r"connectDomains entry 'https://x.example; script-src \*' is not a plain origin"
SIZE_CHANGED = "ui/notifications/size-changed"


def drag(grip: QWidget, dy: int) -> None:
    """Press on the grip, move ``dy`` pixels down (up when negative), let go."""
    start = QPointF(grip.width() / 2, grip.height() / 2)
    end = QPointF(start.x(), start.y() + dy)
    left, none = Qt.MouseButton.LeftButton, Qt.MouseButton.NoButton
    no_keys = Qt.KeyboardModifier.NoModifier
    for kind, pos, button, buttons in (
        (QEvent.Type.MouseButtonPress, start, left, left),
        (QEvent.Type.MouseMove, QPointF(start.x(), start.y() + dy / 2), none, left),
        (QEvent.Type.MouseMove, end, none, left),
        (QEvent.Type.MouseButtonRelease, end, left, none),
    ):
        global_pos = QPointF(grip.mapToGlobal(pos.toPoint()))
        QApplication.sendEvent(grip, QMouseEvent(kind, pos, global_pos, button, buttons, no_keys))


async def show_view(desktop: Any, city: str) -> ViewPane:
    select(desktop, "viewer")
    page = desktop.pages.tools
    tabs = desktop.window.findChild(ServerPage)
    assert tabs is not None
    tabs.tabBar().setCurrentIndex(tabs.indexOf(page))
    await until(
        lambda: page.server == "viewer" and page.row_of("show_weather") is not None, 30, "tools"
    )
    page.select_tool("show_weather")
    field = page.form.fields["city"].widget
    assert isinstance(field, QLineEdit)
    field.setText(city)
    page.call_button.click()
    pane: ViewPane = page.view_pane

    def sized() -> bool:  # the view said how tall it wants to be (120 px)
        return pane.ready and any(SIZE_CHANGED in t for t in pane.heard)

    await until(sized, 60, f"the view of {city} to ask for its height")
    return pane


async def test_the_height_the_person_gives_a_view_is_kept_and_remembered(
    tmp_path: Path, allow_logs: AllowLogs
) -> None:
    allow_logs(SMUGGLED)
    args = [sys.executable, str(VIEWER)]
    write_global(f"[mcp.viewer]\ncommand = {json.dumps(args)}\ntrust = 'full'\n")
    stored = paths().state_dir / "view-heights.json"
    async with running_app("viewer") as desktop:
        pane = await show_view(desktop, "Oslo")
        await until(lambda: pane.web.height() == 120, 10, "the height the view asked for")
        assert pane.grip is not None and pane.grip.isVisible()
        drag(pane.grip, 100)
        assert pane.web.height() == 220
        await until(stored.exists, 10, "the height saved")
        assert json.loads(stored.read_text()) == {'["viewer", "ui://viewer/weather"]': 220}
        # the view asks again: the person's height stays
        pane.bridge.resized.emit(300)
        assert pane.web.height() == 220
        # dragged far past what a view may ask for: the person's limit, not the view's
        drag(pane.grip, 2000)
        assert pane.web.height() == 1200 > MAX_HEIGHT
        drag(pane.grip, -900)
        assert pane.web.height() == 300
        await until(
            lambda: json.loads(stored.read_text()) == {'["viewer", "ui://viewer/weather"]': 300},
            10,
            "the new height saved",
        )

        # another result of the same view: it opens at the person's height
        opened = pane.opened
        pane = await show_view(desktop, "Bergen")
        await until(lambda: pane.opened is not opened, 30, "the new view")
        assert pane.web.height() == 300

    # after a restart too
    async with running_app("viewer") as desktop:
        pane = await show_view(desktop, "Tromsø")
        assert pane.web.height() == 300


async def test_the_grip_resizes_from_the_keyboard_and_the_height_is_remembered(
    tmp_path: Path, allow_logs: AllowLogs
) -> None:
    allow_logs(SMUGGLED)
    args = [sys.executable, str(VIEWER)]
    write_global(f"[mcp.viewer]\ncommand = {json.dumps(args)}\ntrust = 'full'\n")
    stored = paths().state_dir / "view-heights.json"
    async with running_app("viewer") as desktop:
        pane = await show_view(desktop, "Oslo")
        await until(lambda: pane.web.height() == 120, 10, "the height the view asked for")
        grip = pane.grip
        assert grip is not None
        assert grip.focusPolicy() & Qt.FocusPolicy.TabFocus  # reached with Tab
        assert "Up and Down" in grip.accessibleDescription()
        grip.setFocus(Qt.FocusReason.TabFocusReason)
        QTest.keyClick(grip, Qt.Key.Key_Down)
        QTest.keyClick(grip, Qt.Key.Key_Down)
        assert pane.web.height() == 160
        QTest.keyClick(grip, Qt.Key.Key_Up)
        QTest.keyClick(grip, Qt.Key.Key_PageDown)
        assert pane.web.height() == 240
        QTest.keyClick(grip, Qt.Key.Key_A)  # not a resize key: nothing changes
        assert pane.web.height() == 240
        await until(
            lambda: (
                stored.exists()
                and json.loads(stored.read_text()) == {'["viewer", "ui://viewer/weather"]': 240}
            ),
            10,
            "the keyed height saved",
        )
        # the view asks for another height: the person's stays
        pane.bridge.resized.emit(90)
        assert pane.web.height() == 240
        QTest.keyClick(grip, Qt.Key.Key_Home)
        assert pane.web.height() == 80

        # another result of the same view opens at the height keyed last
        opened = pane.opened
        pane = await show_view(desktop, "Bergen")
        await until(lambda: pane.opened is not opened, 30, "the new view")
        assert pane.web.height() == 80
