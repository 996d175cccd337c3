"""Main window behaviour (close to tray, quit, settings) and the tray menu, and screenshots."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage
from PySide6.QtTest import QTest
from pytestqt.qtbot import QtBot

from portico.runtime.events import ServerState, Status
from portico.ui.main_window import MainWindow, settings
from portico.ui.tray import Tray
from portico.ui.tray_state import Aggregate

pytestmark = pytest.mark.slow  # talks to real servers or processes

SCREENSHOTS = Path(__file__).with_name("screenshots.py")


def test_close_hides_to_tray_once_with_a_notice(qtbot: QtBot) -> None:
    window = MainWindow(tray_available=True)
    qtbot.addWidget(window)
    told: list[bool] = []
    quits: list[bool] = []
    window.hiddenToTray.connect(lambda: told.append(True))
    window.quitRequested.connect(lambda: quits.append(True))
    for _ in range(2):
        window.show()
        window.close()
        assert not window.isVisible()
    assert told == [True]  # said once
    assert quits == []


def test_close_without_a_tray_quits(qtbot: QtBot) -> None:
    window = MainWindow(tray_available=False)
    qtbot.addWidget(window)
    quits: list[bool] = []
    window.quitRequested.connect(lambda: quits.append(True))
    window.show()
    window.close()
    assert quits == [True]


def test_ctrl_q_quits(qtbot: QtBot) -> None:
    window = MainWindow()
    qtbot.addWidget(window)
    window.show()
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    window.server_list.setFocus()
    with qtbot.waitSignal(window.quitRequested, timeout=2000):
        QTest.keyClick(window.server_list, Qt.Key.Key_Q, Qt.KeyboardModifier.ControlModifier)


def test_the_server_menu_shows_only_in_the_servers_place(qtbot: QtBot) -> None:
    """Its actions' shortcuts (Ctrl+R, F5, ...) work only there, and the menu says so by
    being there only."""
    window = MainWindow()
    qtbot.addWidget(window)
    window.show()
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    titles = lambda: [a.text() for a in window.menuBar().actions() if a.isVisible()]  # noqa: E731
    assert window.place == "Chats" and "&Server" not in titles()
    QTest.keyClick(window, Qt.Key.Key_2, Qt.KeyboardModifier.ControlModifier)
    assert window.place == "Servers" and "&Server" in titles()
    window.rail_buttons["Chats"].click()
    assert "&Server" not in titles()


def test_geometry_splitter_and_project_are_restored(
    qtbot: QtBot, portico_home: Path, project: Path
) -> None:
    first = MainWindow()
    qtbot.addWidget(first)
    first.resize(777, 555)
    first.splitter.setSizes([300, 477])
    first.show()
    opened: list[str] = []
    first.openProjectRequested.connect(opened.append)
    first.set_project(str(project))
    assert opened == [str(project)]
    sizes = first.splitter.sizes()
    first.save_state()
    assert (portico_home / "config" / "ui.ini").is_file()  # under PORTICO_HOME
    assert settings().value("project/last") == str(project)

    second = MainWindow()
    qtbot.addWidget(second)
    second.restore_state()
    second.show()
    assert second.size() == first.size()
    assert second.splitter.sizes() == sizes
    assert second.project == project
    assert project.name in second.windowTitle()


def test_tray_menu_offers_each_servers_useful_action(qtbot: QtBot) -> None:
    tray = Tray()
    assert tray.available is False  # offscreen has no tray: the app still works
    tray.update_states(
        [
            ServerState("github", Status.RUNNING, tool_count=2),
            ServerState("linear", Status.NEEDS_AUTH),
            ServerState("db", Status.AWAITING_TRUST),
            ServerState("search", Status.FAILED, error="refused"),
        ]
    )
    assert tray.state is Aggregate.ATTENTION
    texts = [a.text() for a in tray.menu.actions() if not a.isSeparator()]
    assert texts[0] == tray.tooltip == "4 servers: 1 running, 2 need you, 1 failed; 2 tools"
    assert "github — Running" in texts
    assert texts[-3:] == ["Show / Hide Window", "Open Config Editor", "Quit Portico"]
    subs = {a.text(): a.menu() for a in tray.menu.actions() if a.menu() is not None}
    assert [a.text() for a in subs["linear — Needs sign-in"].actions()] == ["Sign in…"]
    assert [a.text() for a in subs["db — Awaiting trust review"].actions()] == ["Review trust…"]
    with qtbot.waitSignal(tray.serverActionRequested) as blocker:
        subs["search — Failed"].actions()[0].trigger()
    assert blocker.args == ["retry", "search"]
    with qtbot.waitSignal(tray.quitRequested):
        tray.quit_action.trigger()
    # the hub's discovery line never freezes the tooltip: it follows the states
    tray.set_summary("MCP: registered 2 tool(s) from 1 server(s) (1 needs sign-in: linear)")
    assert tray.tooltip == "4 servers: 1 running, 2 need you, 1 failed; 2 tools"


def test_tray_notifications_are_rate_limited() -> None:
    tray = Tray(notify_interval=3600)
    assert tray.notify("x failed", "boom", key="x:failed") is True
    assert tray.notify("x failed", "boom", key="x:failed") is False
    assert tray.notify("y failed", "boom", key="y:failed") is True


def test_screenshots_render(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(SCREENSHOTS), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    names = sorted(p.name for p in tmp_path.glob("*.png"))
    assert "main-window.png" in names and len(names) == 8
    image = QImage(str(tmp_path / "main-window.png"))
    assert image.width() >= 900 and image.height() >= 500
    assert QImage(str(tmp_path / "dialog-trust.png")).width() >= 480


def test_the_main_window_screenshot_shows_the_servers_place_beside_the_rail(
    qtbot: QtBot,
) -> None:
    sys.path.insert(0, str(SCREENSHOTS.parent))
    from screenshots import main_window

    window = main_window()
    qtbot.addWidget(window)
    window.show()
    assert window.place == "Servers"
    assert window.rail.isVisible() and window.rail_buttons["Servers"].isChecked()
    assert window.server_list.currentIndex().row() == 0
    window.close()
