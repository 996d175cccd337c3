"""First run: the welcome's paths each end in a running server without the config editor,
and the import offers exactly the files that exist, with their server counts."""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from portico.config import load
from portico.paths import paths
from portico.runtime.events import Status
from portico.ui.app import DesktopApp
from portico.ui.loop import ensure_application
from portico.ui.onboarding.setup import found_imports
from tests.ui.qt_helpers import until

pytestmark = pytest.mark.slow  # talks to real servers or processes

REPO = Path(__file__).resolve().parents[3]
FIXTURES = REPO / "tests" / "config" / "import_fixtures"
TINY = REPO / "tests" / "servers" / "tiny.py"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temporary home with real-looking Claude Desktop and VS Code files (Linux places)."""
    home = tmp_path / "home"
    (home / ".config" / "Claude").mkdir(parents=True)
    (home / ".config" / "Code" / "User").mkdir(parents=True)
    shutil.copy(
        FIXTURES / "claude_desktop_config.json",
        home / ".config" / "Claude" / "claude_desktop_config.json",
    )
    shutil.copy(
        FIXTURES / "vscode_workspace" / ".vscode" / "mcp.json",
        home / ".config" / "Code" / "User" / "mcp.json",
    )
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.setattr(sys, "platform", "linux")
    return home


def _tiny_import(home: Path) -> Path:
    """A Claude Desktop file whose two servers really start (the tiny stdio server)."""
    path = home / ".config" / "Claude" / "claude_desktop_config.json"
    servers = {
        name: {"command": sys.executable, "args": [str(TINY), "--tools", str(n), "--name", name]}
        for name, n in (("alpha", 2), ("beta", 3))
    }
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return path


def test_found_imports_lists_only_existing_files_with_counts(home: Path) -> None:
    found = {f.label: f for f in found_imports()}
    assert set(found) == {"Claude Desktop", "VS Code"}  # no Claude Code, no Cursor file
    assert found["Claude Desktop"].count == 5  # "broken" has neither command nor url
    assert found["VS Code"].count == 6
    assert found["Claude Desktop"].line == "Claude Desktop — 5 servers"


async def _start(desktop: DesktopApp) -> asyncio.Future[int]:
    run = asyncio.ensure_future(desktop.run())
    welcome = desktop.onboarding.welcome
    await until(lambda: desktop.window.chats.pane.stack.currentWidget() is welcome, 60, "welcome")
    await until(lambda: welcome.import_buttons, 30, "the import offers")
    return run


async def test_welcome_offers_imports_with_counts(home: Path, qtbot: QtBot) -> None:
    desktop = DesktopApp(ensure_application())
    run = await _start(desktop)
    try:
        welcome = desktop.onboarding.welcome
        assert desktop.window.place == "Chats"
        texts = sorted(b.text() for b in welcome.import_buttons)
        assert texts == ["Claude Desktop — 5 servers", "VS Code — 6 servers"]
        assert welcome.add_button.hasFocus()
        assert "without any model" not in welcome.direct.text()  # one line, plain words
        assert "tools, prompts and resources work in direct mode" in welcome.direct.text()
        pane = desktop.window.chats.pane
        assert pane.title.text() == "Welcome"  # not the empty chat's "New chat" behind it
        welcome.chat_button.click()
        await until(lambda: pane.stack.currentWidget() is pane.transcript, 10, "the chat")
        assert pane.title.text() == "New chat"
    finally:
        desktop.request_quit()
        assert await asyncio.wait_for(run, 60) == 0


async def test_import_path_reaches_running_servers(home: Path, qtbot: QtBot) -> None:
    _tiny_import(home)
    (home / ".config" / "Code" / "User" / "mcp.json").unlink()
    desktop = DesktopApp(ensure_application())
    run = await _start(desktop)
    try:
        welcome = desktop.onboarding.welcome
        assert [b.text() for b in welcome.import_buttons] == ["Claude Desktop — 2 servers"]
        welcome.import_buttons[0].click()
        flow = await until(lambda: desktop.onboarding.flows and desktop.onboarding.flows[0])
        assert flow.list.count() == 2
        flow.import_button.click()

        def running() -> bool:
            states = [desktop.model.state(n) for n in ("alpha", "beta")]
            return all(s is not None and s.status is Status.RUNNING for s in states)

        await until(running, 60, "both imported servers to run")
        await until(lambda: "2 of 2 running" in flow.status.text(), 10, "the flow to say so")
        assert desktop.editor is None  # never opened the config editor
        written = load(None)
        assert sorted(s.name for s in written.servers) == ["alpha", "beta"]
        assert paths().global_toml.is_file()
        flow.chat_button.click()
    finally:
        desktop.request_quit()
        assert await asyncio.wait_for(run, 60) == 0


async def test_add_server_by_command_reaches_running(home: Path, qtbot: QtBot) -> None:
    desktop = DesktopApp(ensure_application())
    run = await _start(desktop)
    try:
        desktop.onboarding.welcome.add_button.click()
        flow = await until(lambda: desktop.onboarding.flows and desktop.onboarding.flows[0])
        flow.select_tab("Command")
        command = f'"{sys.executable}" "{TINY}" --tools 4'
        qtbot.keyClicks(flow.command, command)
        assert flow.name_edit.text() == "tiny"  # guessed from the command
        flow.name_edit.setText("mine")
        flow.name_edit.setModified(True)
        flow.add_button.click()
        await until(lambda: "is running with" in flow.status.text(), 60, "the server to run")
        assert flow.status.text() == "mine is running with 5 tools."  # echo + tool_1..4
        assert flow.chat_button.isVisible()
        assert desktop.editor is None
        spec = load(None).server("mine")
        assert spec is not None and spec.command == sys.executable
    finally:
        desktop.request_quit()
        assert await asyncio.wait_for(run, 60) == 0


async def test_add_server_refuses_a_bad_url_in_plain_words(home: Path, qtbot: QtBot) -> None:
    desktop = DesktopApp(ensure_application())
    run = await _start(desktop)
    try:
        desktop.onboarding.welcome.add_button.click()
        flow = await until(lambda: desktop.onboarding.flows and desktop.onboarding.flows[0])
        flow.select_tab("URL")
        qtbot.keyClicks(flow.url, "mcp.example.com/mcp")
        flow.add_button.click()
        assert flow.status.text() == "Enter the server's URL, starting with https://."
        assert not paths().global_toml.exists()  # nothing half-written
        flow.url.clear()
        qtbot.keyClicks(flow.url, "https://docs.example.com/mcp")
        assert flow.name_edit.text() == "docs"
        qtbot.keyClick(flow.add_button, Qt.Key.Key_Space)  # keyboard: Space presses it
        await until(lambda: load(None).server("docs") is not None, 20, "the URL server written")
    finally:
        desktop.request_quit()
        assert await asyncio.wait_for(run, 60) == 0
