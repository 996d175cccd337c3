"""Config editor raw tabs: highlighting, debounced live validation, the screenshot script."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtGui import QColor
from pytestqt.qtbot import QtBot

from portico.config.model import Dialect
from portico.ui.editor.raw_tab import RawTab
from tests.ui.editor_helpers import install_global, open_editor
from tests.ui.qt_helpers import until

pytestmark = pytest.mark.slow  # talks to real servers or processes

SCREENSHOT = Path(__file__).parents[1] / "editor_screenshot.py"


def _colour_at(tab: RawTab, line: int, column: int) -> QColor | None:
    block = tab.document().findBlockByNumber(line)
    for fmt in block.layout().formats():
        if fmt.start <= column < fmt.start + fmt.length:
            return fmt.format.foreground().color()
    return None


def test_toml_highlighting(qtbot: QtBot) -> None:
    text = '# a comment\n[mcp.docs]\nurl = "https://x/#not-a-comment"  # tail\n'
    tab = RawTab(text, Dialect.TOML)
    qtbot.addWidget(tab)
    tab.highlighter.rehighlight()
    colour = {k: f.foreground().color() for k, f in tab.highlighter.formats.items()}
    assert _colour_at(tab, 0, 3) == colour["comment"]
    assert _colour_at(tab, 1, 2) == colour["table"]
    assert _colour_at(tab, 2, 0) == colour["key"]
    assert _colour_at(tab, 2, 12) == colour["string"]  # the '#' inside the string
    assert _colour_at(tab, 2, len('url = "https://x/#not-a-comment"  # ')) == colour["comment"]


def test_yaml_highlighting(qtbot: QtBot) -> None:
    text = "mcp_servers:\n  docs:\n    url: 'https://x'   # where\n    timeout: 15\n"
    tab = RawTab(text, Dialect.YAML)
    qtbot.addWidget(tab)
    tab.highlighter.rehighlight()
    colour = {k: f.foreground().color() for k, f in tab.highlighter.formats.items()}
    assert _colour_at(tab, 0, 0) == colour["table"]  # a top-level key
    assert _colour_at(tab, 1, 3) == colour["key"]
    assert _colour_at(tab, 2, 10) == colour["string"]
    assert _colour_at(tab, 2, len("    url: 'https://x'   #")) == colour["comment"]
    assert _colour_at(tab, 3, 13) == colour["number"]


async def test_typing_revalidates_after_a_pause(qtbot: QtBot) -> None:
    path = install_global("edit_servers.yaml")
    window = await open_editor(qtbot)
    window.select("filesystem", path)
    raw = window.raw_tab(path)
    cursor = raw.textCursor()
    block = raw.document().findBlockByNumber(9)  # "    timeout: 15   # seconds; ..."
    assert block.text().startswith("    timeout: 15")
    cursor.setPosition(block.position() + len("    timeout: 15"))
    raw.setTextCursor(cursor)
    raw.insertPlainText("x")  # as if typed: "timeout: 15x"
    assert raw.timer.isActive() and raw.markers == {}
    await until(lambda: raw.markers, 5, "a marker after the debounce")
    message = raw.message_at_line(10)
    assert message is not None
    assert message.endswith("filesystem.timeout: must be a number of seconds, not '15x'")
    assert window.form.fields["timeout"].error_text == message
    assert window.form.fields["timeout"].editor.text() == "15x"  # type: ignore[attr-defined]


def test_screenshot_script_renders_the_editor(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(SCREENSHOT), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    names = ("config-editor.png", "config-editor-raw.png", "config-editor-add-server.png")
    for name in (*names, "config-editor-models.png"):
        assert (tmp_path / name).stat().st_size > 10_000
