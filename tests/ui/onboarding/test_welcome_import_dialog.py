"""The import dialog stays a well-behaved QDialog (its own attributes shadow none of Qt's)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QDialog
from pytestqt.qtbot import QtBot

from portico.config.importers.common import ImportResult
from portico.ui.onboarding.import_flow import ImportFlow
from portico.ui.onboarding.setup import FoundImport
from tests.ui.qt_helpers import windows_shown


def _flow(qtbot: QtBot, tmp_path: Path) -> ImportFlow:
    path = tmp_path / "claude_desktop_config.json"
    found = FoundImport("claude-desktop", "Claude Desktop", path, 1)
    result = ImportResult("claude-desktop", path, servers=[("alpha", {"command": "uvx"})])
    flow = ImportFlow(found, result)
    qtbot.addWidget(flow)
    return flow


def test_building_the_dialog_with_notes_flashes_no_window(qtbot: QtBot, tmp_path: Path) -> None:
    path = tmp_path / "claude_desktop_config.json"
    found = FoundImport("claude-desktop", "Claude Desktop", path, 1)
    result = ImportResult("claude-desktop", path, servers=[("alpha", {"command": "uvx"})])
    result.notes.append("alpha: the env value is read from your shell")
    with windows_shown() as shown:
        flow = ImportFlow(found, result)
    qtbot.addWidget(flow)
    assert shown == []
    flow.show()
    assert flow.notes.isVisible()


def test_the_dialog_result_is_the_qt_result_code(qtbot: QtBot, tmp_path: Path) -> None:
    flow = _flow(qtbot, tmp_path)
    flow.show()
    flow.reject()
    assert not flow.isVisible()
    assert flow.result() == QDialog.DialogCode.Rejected  # an attribute once hid this method
    assert flow.chosen() == [("alpha", {"command": "uvx"})]


def test_start_chatting_asks_for_chats_and_closes(qtbot: QtBot, tmp_path: Path) -> None:
    flow = _flow(qtbot, tmp_path)
    flow.show()
    flow.chat_button.show()
    with qtbot.waitSignal(flow.chatRequested, timeout=2000):
        flow.chat_button.click()
    assert not flow.isVisible()
