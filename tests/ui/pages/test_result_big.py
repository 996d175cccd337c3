"""A 10 MiB tool result through the real app: shown cut (quickly, the GUI loop keeps
ticking), with Show all, Copy all and Save giving the whole text."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from PySide6.QtGui import QGuiApplication

from portico.prompts import ApprovalChoice
from portico.ui.app import DesktopApp
from portico.ui.dialogs.approval_dialog import ApprovalDialog
from portico.ui.pages.result_view import LINE_BREAK, MAX_TEXT
from portico.ui.pages.tools import ToolsPage
from tests.helpers.heartbeat import Heartbeat
from tests.ui.pages_helpers import command, running_app, select, write_global
from tests.ui.qt_helpers import until

pytestmark = pytest.mark.slow  # talks to real servers or processes

CONFIG = f"""[mcp.toolbox]
command = {command("toolbox.py", "stdio")}
"""
MIB = 1024 * 1024
GAP_BOUND_MS = 500  # loose: 2 shared cores; the figure is printed


async def _call_big(desktop: DesktopApp, page: ToolsPage, mib: float) -> None:
    page.select_tool("big")
    assert page.form is not None
    page.form.fields["mib"].widget.setValue(mib)  # type: ignore[attr-defined]
    page.result_view.clear()
    page.call_button.click()
    dialog = await until(lambda: desktop.prompter.current, 30, "the approval")  # type: ignore[union-attr]
    assert isinstance(dialog, ApprovalDialog)
    dialog.choice_buttons[ApprovalChoice.ONCE].click()
    await until(lambda: page.result_view.full_text, 60, f"the {mib} MiB result")


async def test_a_10_mib_result_shows_cut_without_freezing(tmp_path: Path) -> None:
    write_global(CONFIG)
    async with running_app("toolbox") as desktop:
        select(desktop, "toolbox")
        page = desktop.pages.tools
        desktop.window.page.setCurrentWidget(page)
        await until(lambda: page.row_of("big") is not None, 30, "the tool list")
        view = page.result_view

        beat = Heartbeat()
        beat.start()
        started = time.perf_counter()
        await _call_big(desktop, page, 10)
        gap = beat.stop()
        took = time.perf_counter() - started
        shown = view.toPlainText()
        print(f"\n10 MiB result: shown in {took:.1f} s; longest GUI gap {gap:.0f} ms")
        assert len(view.full_text) == 10 * MIB
        assert view.truncated
        assert len(shown) < MAX_TEXT + MAX_TEXT // LINE_BREAK + 1000
        assert f"Show all ({10 * MIB:,} characters)" in shown
        assert gap < GAP_BOUND_MS, f"the GUI loop stalled {gap:.0f} ms"

        # Rendering the cut result again, on its own: how long the GUI thread is busy.
        beat.start()
        render = time.perf_counter()
        view.show_result(view._shown[0])  # type: ignore[index]
        render_ms = (time.perf_counter() - render) * 1000
        beat.stop()
        print(f"re-rendering the cut 10 MiB result took {render_ms:.0f} ms on the GUI thread")

        # Copy all and Save give the exact, complete text.
        view.copy_all()
        assert QGuiApplication.clipboard().text() == "x" * (10 * MIB)
        target = tmp_path / "result.txt"
        saving = view.save_to(str(target))
        assert saving is not None
        await saving
        assert target.read_text(encoding="utf-8") == "x" * (10 * MIB)

        # A smaller cut result: Show all renders every character.
        await _call_big(desktop, page, 0.5)
        assert view.truncated and "Show all" in view.toPlainText()
        view.show_all()
        assert view.toPlainText().replace("\n", "") == "x" * (MIB // 2)
