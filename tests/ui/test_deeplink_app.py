"""portico://add in the running app: a second launch hands the link over, the app shows
exactly what would be written, and only the person's confirmation writes it."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from urllib.parse import quote

from portico import paths
from portico.ui.app import DesktopApp
from portico.ui.dialogs.deeplink_dialog import DeepLinkDialog
from portico.ui.dialogs.trust_dialog import TrustDialog
from portico.ui.loop import ensure_application
from portico.ui.single_instance import SingleInstance
from tests.ui.qt_helpers import gone, until

TINY = str(Path(__file__).resolve().parent.parent / "servers" / "tiny.py").replace("\\", "/")
PY = sys.executable.replace("\\", "/")
LINK = (
    "portico://add?name=everything&command=" + quote(PY) + f"&arg={quote(TINY)}&arg=--tools&arg=2"
)
ADDED = f'[mcp.everything]\ncommand = ["{PY}", "{TINY}", "--tools", "2"]\nfrom_link = true\n'


def _notices(desktop: DesktopApp) -> list[str]:
    return [row.label.text() for row in desktop.window.notices.rows()]


async def _started(desktop: DesktopApp) -> asyncio.Future[int]:
    run = asyncio.ensure_future(desktop.run())
    await until(lambda: desktop.session is not None, 60, "the runtime")
    return run


async def _stop(desktop: DesktopApp, run: asyncio.Future[int]) -> None:
    desktop.request_quit()
    assert await asyncio.wait_for(run, 60) == 0


async def test_a_second_launch_passes_the_link_and_add_writes_exactly_what_was_shown() -> None:
    first = SingleInstance(name=f"portico-test-{id(object())}")
    assert first.acquire()
    desktop = DesktopApp(ensure_application(), first)
    run = await _started(desktop)
    try:
        second = SingleInstance(name=first.name)
        assert not second.acquire(url=LINK)  # the running app got it; this launch exits
        dialog = await until(lambda: desktop.links.dialogs and desktop.links.dialogs[0], 10)
        assert isinstance(dialog, DeepLinkDialog) and dialog.isVisible()
        target = paths.paths().global_toml
        assert dialog.file_label.text() == str(target)
        assert dialog.text_view.toPlainText().endswith(ADDED)
        assert not target.exists()  # shown, not written
        assert dialog.cancel_button.hasFocus() or not dialog.isActiveWindow()
        dialog.add_button_.click()
        await until(lambda: target.exists(), 10, "the file")
        assert target.read_text(encoding="utf-8") == dialog.prepared.added
        await until(lambda: any("Added everything" in t for t in _notices(desktop)), 10)
        await until(lambda: desktop.model.state("everything") is not None, 30, "the server listed")
        state = lambda: desktop.model.state("everything")  # noqa: E731
        # a linked server waits for its trust review before it first runs anything
        review = await until(lambda: desktop.prompter.current, 60, "the trust review")  # type: ignore[union-attr]
        assert isinstance(review, TrustDialog) and review.server == "everything"
        assert any("portico:// link" in r for r in review.request.reasons)
        assert state().status.value != "Running"
        review.trust_button.click()
        await until(lambda: state().status.value == "Running", 60, f"Running: {state()}")
    finally:
        await _stop(desktop, run)


async def test_cancel_writes_nothing_and_a_bad_link_only_explains() -> None:
    desktop = DesktopApp(ensure_application())
    run = await _started(desktop)
    try:
        desktop.open_link(LINK)
        dialog = await until(lambda: desktop.links.dialogs and desktop.links.dialogs[0], 10)
        dialog.cancel_button.click()
        await until(lambda: gone(dialog), 10, "the dialog to close")
        assert not paths.paths().global_toml.exists()
        desktop.open_link("portico://add?name=bad.name&url=https://mcp.example.com/mcp")
        await until(lambda: any("was not opened" in t for t in _notices(desktop)), 10)
        text = next(t for t in _notices(desktop) if "was not opened" in t)
        assert "contains a dot" in text
        assert not desktop.links.dialogs
        desktop.open_link("portico://add?name=x&command=" + "a" * 70_000)
        await until(lambda: any("at most 8192" in t for t in _notices(desktop)), 10)
        assert not paths.paths().global_toml.exists()
    finally:
        await _stop(desktop, run)


async def test_started_at_login_without_a_tray_still_shows_the_window() -> None:
    desktop = DesktopApp(ensure_application(), hidden=True)
    assert not desktop.tray.available  # offscreen: no system tray to hide in
    run = await _started(desktop)
    try:
        assert desktop.window.isVisible()
        menus = [a.menu() for a in desktop.window.menuBar().actions() if a.menu() is not None]
        holder = next(m for m in menus if desktop.window.quit_action in m.actions())
        actions = holder.actions()
        assert desktop.start_at_login in actions  # File ▸ Start at Login, above Quit
        assert actions.index(desktop.start_at_login) < actions.index(desktop.window.quit_action)
    finally:
        await _stop(desktop, run)


async def test_a_link_given_at_start_opens_once_the_window_is_up() -> None:
    desktop = DesktopApp(ensure_application(), open_url=LINK)
    run = await _started(desktop)
    try:
        dialog = await until(lambda: desktop.links.dialogs and desktop.links.dialogs[0], 10)
        assert desktop.window.isVisible()
        assert dialog.text_view.toPlainText().endswith(ADDED)
        dialog.close()  # the window's close button: the same as Cancel
        await until(lambda: gone(dialog), 10)
        assert not paths.paths().global_toml.exists()
    finally:
        await _stop(desktop, run)
