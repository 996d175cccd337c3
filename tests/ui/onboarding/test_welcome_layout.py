"""The welcome lays out without clipping in the window at its default 960×620 and larger:
every label and button gets at least the room its text needs (wrapped labels: their
height for the width they got), and all of it can be reached (scrolled to) in the pane."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QPoint
from PySide6.QtWidgets import QAbstractButton, QLabel, QWidget
from pytestqt.qtbot import QtBot

from portico.ui.main_window import MainWindow
from portico.ui.onboarding.setup import FoundImport
from portico.ui.onboarding.welcome import WelcomePage

FOUND = [
    FoundImport("claude-desktop", "Claude Desktop", Path("/x/claude_desktop_config.json"), 5),
    FoundImport("claude-code", "Claude Code", Path("/x/.claude.json"), 12),
    FoundImport("vscode", "VS Code", Path("/x/Code/User/mcp.json"), 3),
    FoundImport("cursor", "Cursor", Path("/x/.cursor/mcp.json"), 0, "not valid JSON (line 3)"),
]


def _clipped(widget: QWidget) -> str | None:
    """Why ``widget``'s text does not fit in its geometry, or None when it does."""
    size = widget.size()
    if isinstance(widget, QLabel) and widget.wordWrap():
        need = widget.heightForWidth(size.width())
        if size.height() < need:
            return f"{size.height()} px high, its text needs {need} px at {size.width()} px"
        if size.width() < widget.minimumSizeHint().width():
            return f"{size.width()} px wide, its longest word needs more"
        return None
    hint = widget.sizeHint() if isinstance(widget, QLabel) else widget.minimumSizeHint()
    if size.width() < hint.width() or size.height() < hint.height():
        return f"{size.width()}×{size.height()} px, its text needs {hint.width()}×{hint.height()}"
    return None


def _shown(window: MainWindow, qtbot: QtBot, width: int, height: int) -> WelcomePage:
    qtbot.addWidget(window)
    welcome = WelcomePage()
    welcome.set_imports(FOUND)
    window.chats.pane.show_welcome(welcome)
    window.resize(width, height)
    window.show()
    qtbot.waitExposed(window)
    qtbot.wait(50)  # the layouts settle (the scroll area sizes its page for the width)
    assert window.width() == width and window.height() == height
    return welcome


@pytest.mark.parametrize("size", [(960, 620), (1280, 800), (1920, 1080)])
def test_no_welcome_text_is_clipped(qtbot: QtBot, size: tuple[int, int]) -> None:
    window = MainWindow()
    welcome = _shown(window, qtbot, *size)
    texts = [w for w in welcome.findChildren(QWidget) if isinstance(w, QLabel | QAbstractButton)]
    assert len(texts) >= 12  # title, intro, three actions and their details, four imports…
    problems = {w.text(): why for w in texts if w.isVisibleTo(welcome) and (why := _clipped(w))}
    assert problems == {}


@pytest.mark.parametrize("size", [(960, 620), (1280, 800)])
def test_every_part_of_the_welcome_can_be_reached(qtbot: QtBot, size: tuple[int, int]) -> None:
    """Scrolled to, each button lies wholly inside the welcome's visible area."""
    window = MainWindow()
    welcome = _shown(window, qtbot, *size)
    buttons = [b for b in welcome.findChildren(QAbstractButton) if b.isVisibleTo(welcome)]
    assert buttons
    for button in buttons:
        welcome.scroll_area.ensureWidgetVisible(button, 0, 0)
        qtbot.wait(10)
        top_left = button.mapTo(welcome, QPoint(0, 0))
        inside = welcome.rect().contains(top_left) and welcome.rect().contains(
            top_left + QPoint(button.width() - 1, button.height() - 1)
        )
        assert inside, f"{button.text()!r} at {top_left.x()},{top_left.y()} in {welcome.size()}"
