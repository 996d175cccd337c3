"""The question asked where no sandbox can be set up: shown whole, Enter answers nothing,
closing says no, Run Unsandboxed says yes."""

from __future__ import annotations

import asyncio

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from portico.prompts import UnsandboxedRequest
from portico.ui.dialogs.unsandboxed_dialog import UnsandboxedDialog
from portico.ui.facade import RuntimeThread
from portico.ui.prompter import QtPrompter
from tests.ui.dialogs.test_qt_dialogs import ask, prompter, shown

__all__ = ["prompter"]

REQUEST = UnsandboxedRequest(
    server="files",
    source="/p/.portico/mcp.toml:3",
    why="this machine cannot set up a sandbox (user namespaces may be off)",
)


async def test_run_unsandboxed_asks_plainly(runtime: RuntimeThread, prompter: QtPrompter) -> None:
    answer = ask(runtime, prompter.run_unsandboxed(REQUEST))
    dialog = await shown(prompter, UnsandboxedDialog)
    text = dialog.question_label.text()
    assert "'files' (/p/.portico/mcp.toml:3) is set to run in a sandbox" in text
    assert "user namespaces may be off" in text and "Run it unsandboxed" in text
    assert dialog.focusWidget() is dialog.no_button
    QTest.keyClick(dialog.focusWidget(), Qt.Key.Key_Return)
    assert not dialog.is_answered and dialog.isVisible()
    dialog.close()
    assert await asyncio.wait_for(answer, 5) is False

    answer = ask(runtime, prompter.run_unsandboxed(REQUEST))
    dialog = await shown(prompter, UnsandboxedDialog)
    dialog.yes_button.click()
    assert await asyncio.wait_for(answer, 5) is True
