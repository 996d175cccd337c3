"""Server actions from the window: Disable / Enable written to the defining file, Restart
and Retry from the keyboard, Remove after a non-modal confirmation."""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from portico.runtime.events import ServerState, Status
from portico.ui.actions import ActionId
from portico.ui.dialogs.trust_dialog import TrustDialog
from tests.ui.pages_helpers import command, running_app, select, status_of, write_global
from tests.ui.qt_helpers import gone, until

pytestmark = pytest.mark.slow  # talks to real servers or processes

CONFIG = f"""# two small servers
[mcp.tiny]
command = {command("tiny.py", "--tools", "2")}  # keep this comment
timeout = 30000

# this one always fails
[mcp.broken]
command = {command("tiny.py", "--exit", "3")}
"""


def changed_lines(before: str, after: str) -> tuple[list[str], list[str]]:
    diff = list(difflib.ndiff(before.splitlines(), after.splitlines()))
    return (
        [d[2:] for d in diff if d.startswith("+ ")],
        [d[2:] for d in diff if d.startswith("- ")],
    )


async def test_disable_enable_restart_retry_and_remove() -> None:
    path = write_global(CONFIG)
    async with running_app("tiny") as desktop:
        window = desktop.window
        seen: list[tuple[str, Status]] = []
        desktop.bridge.statusChanged.connect(lambda s: seen.append((s.name, s.status)))
        await until(
            lambda: status_of(desktop, "broken") in (Status.FAILED, Status.COOLDOWN), 30, "broken"
        )
        window.show()
        window.activateWindow()  # shortcuts need the active window
        await until(lambda: QApplication.activeWindow() is window, 10, "the window active")
        select(desktop, "tiny")
        window.server_list.setFocus()

        # Ctrl+R restarts: Connecting, then Running again
        seen.clear()
        QTest.keyClick(window.server_list, Qt.Key.Key_R, Qt.KeyboardModifier.ControlModifier)
        await until(lambda: ("tiny", Status.CONNECTING) in seen, 30, "tiny connecting")
        await until(lambda: seen[-1] == ("tiny", Status.RUNNING), 30, "tiny running again")

        # F5 retries a failed server at once (it fails again)
        select(desktop, "broken")
        labels = dict(window.server_actions(window.selected_state()))  # type: ignore[arg-type]
        assert labels["Retry now"] and labels["Remove"] and labels["Disable"]
        seen.clear()
        QTest.keyClick(window.server_list, Qt.Key.Key_F5)
        await until(lambda: ("broken", Status.CONNECTING) in seen, 30, "broken retried")
        await until(lambda: ("broken", Status.FAILED) in seen, 30, "broken failing again")

        # Disable through the Server menu action: one line written, the server goes Disabled
        select(desktop, "tiny")
        before = path.read_text(encoding="utf-8")
        window.serverActionRequested.emit(ActionId.DISABLE, "tiny")
        await until(lambda: status_of(desktop, "tiny") is Status.DISABLED, 30, "tiny disabled")
        after = path.read_text(encoding="utf-8")
        added, removed = changed_lines(before, after)
        assert added == ["enabled = false"] and removed == []
        assert "# keep this comment" in after
        state = window.selected_state()
        assert isinstance(state, ServerState)
        assert dict(window.server_actions(state))["Enable"] is True
        # Ctrl+D toggles it back on
        QTest.keyClick(window.server_list, Qt.Key.Key_D, Qt.KeyboardModifier.ControlModifier)
        await until(lambda: status_of(desktop, "tiny") is Status.RUNNING, 30, "tiny enabled")
        assert "enabled = false" not in path.read_text(encoding="utf-8")

        # Delete asks first (non-modal); Keep leaves everything, Remove deletes the entry
        select(desktop, "broken")
        window.server_list.setFocus()
        QTest.keyClick(window.server_list, Qt.Key.Key_Delete)
        box = await until(lambda: desktop.pages.confirmation, 10, "the confirmation")
        assert not box.isModal() and "broken" in box.text()
        keep = next(b for b in box.buttons() if b.text() == "&Keep")
        keep.click()
        await until(lambda: gone(box), 10, "the confirmation to close")
        assert "[mcp.broken]" in path.read_text(encoding="utf-8")
        box = desktop.pages.confirm_remove("broken")
        remove = next(b for b in box.buttons() if b.text() == "&Remove")
        remove.click()
        await until(lambda: desktop.model.row_of("broken") is None, 30, "broken removed")
        text = path.read_text(encoding="utf-8")
        assert "[mcp.broken]" not in text and "[mcp.tiny]" in text
        assert "# keep this comment" in text
        assert status_of(desktop, "tiny") is Status.RUNNING


async def test_review_trust_asks_again_after_a_declined_review(project: Path) -> None:
    (project / ".portico" / "mcp.toml").write_text(
        f"[mcp.local]\ncommand = {command('tiny.py')}\n", encoding="utf-8"
    )
    async with running_app(project=project) as desktop:
        first = await until(lambda: desktop.prompter.current, 60, "the first trust review")  # type: ignore[union-attr]
        assert isinstance(first, TrustDialog)
        first.close()  # declined: the server waits for a review
        await until(
            lambda: status_of(desktop, "local") is Status.AWAITING_TRUST, 30, "awaiting trust"
        )
        window = desktop.window
        select(desktop, "local")
        state = window.selected_state()
        assert dict(window.server_actions(state))["Review trust…"] is True  # type: ignore[arg-type]
        window.server_menu.aboutToShow.emit()  # the Server menu names the shortcuts
        keys = {a.text(): a.shortcut().toString() for a in window.server_menu.actions()}
        assert keys["Review trust…"] == "Ctrl+Shift+T" and keys["Restart"] == "Ctrl+R"
        assert window.servers.commands.trigger(ActionId.REVIEW_TRUST)
        again = await until(
            lambda: desktop.prompter.current if desktop.prompter.current is not first else None,  # type: ignore[union-attr]
            30,
            "the review asked again",
        )
        assert isinstance(again, TrustDialog) and again.server == "local"
        again.once_button.click()
        await until(lambda: status_of(desktop, "local") is Status.RUNNING, 30, "local running")
