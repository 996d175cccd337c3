"""The Servers place in the real app: the empty state with Add server…, and the context
menu from the keyboard (Shift+F10, the Menu key)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMenu

from tests.ui.pages_helpers import command, running_app, select, write_global
from tests.ui.qt_helpers import until


async def test_no_servers_shows_an_add_server_button_not_a_selection_hint() -> None:
    write_global("# nothing configured yet\n")
    async with running_app() as desktop:
        place = desktop.window.servers
        await until(lambda: place.is_empty, 30, "the empty state")
        place.show()
        assert place.empty.isVisible()
        assert not place.page.isVisible()  # no "Select a server on the left."
        asked: list[bool] = []
        desktop.window.addServerRequested.connect(lambda: asked.append(True))
        QTest.mouseClick(place.empty.add_button, Qt.MouseButton.LeftButton)
        QTest.mouseClick(place.add_button, Qt.MouseButton.LeftButton)
        assert asked == [True, True]


async def test_shift_f10_and_the_menu_key_open_the_context_menu() -> None:
    write_global(f"[mcp.tiny]\ncommand = {command('tiny.py')}\n")
    async with running_app("tiny") as desktop:
        window = desktop.window
        window.show()
        assert not window.servers.is_empty
        select(desktop, "tiny")
        window.server_list.setFocus()
        for key, mods in (
            (Qt.Key.Key_F10, Qt.KeyboardModifier.ShiftModifier),
            (Qt.Key.Key_Menu, Qt.KeyboardModifier.NoModifier),
        ):
            QTest.keyClick(window.server_list, key, mods)
            menu = await until(lambda: _open_menu(), 10, "the context menu")
            labels = [a.text() for a in menu.actions()]
            assert "Restart" in labels and "Remove" in labels
            menu.close()


def _open_menu() -> QMenu | None:
    popup = QApplication.activePopupWidget()
    if isinstance(popup, QMenu) and popup.isVisible():
        return popup
    return None


def test_no_mnemonic_is_used_twice_in_the_approval_dialog() -> None:
    import re

    from portico.prompts import ToolApprovalRequest
    from portico.ui.dialogs.approval_dialog import ApprovalDialog
    from portico.ui.loop import ensure_application

    ensure_application()
    dialog = ApprovalDialog(
        ToolApprovalRequest(
            server="s",
            tool="t",
            qualified_name="s__t",
            description="",
            arguments={"a": 1},
            arguments_json='{"a": 1}',
            annotations={},
            cost_line=None,
            spend_line=None,
            reason="this tool is not marked read-only",
        )
    )
    from PySide6.QtWidgets import QAbstractButton

    keys = [
        m.group(1).lower()
        for b in dialog.findChildren(QAbstractButton)
        for m in [re.search(r"&(\w)", b.text())]
        if m
    ]
    assert len(keys) == len(set(keys)), keys
    dialog.close()


def test_the_oauth_dialog_never_claims_a_browser_opened() -> None:
    from portico.prompts import AuthorizeRequest
    from portico.ui.dialogs.oauth_dialog import OAuthDialog
    from portico.ui.loop import ensure_application

    ensure_application()
    base = dict(
        server="linear",
        authorize_url="https://auth.example.com/authorize?x=1",
        redirect_uri="http://127.0.0.1:5000/callback",
        timeout=120,
        reauth=False,
    )
    failed = OAuthDialog(AuthorizeRequest(browser_opened=False, **base))  # type: ignore[arg-type]
    assert "No browser could be opened" in failed.intro.text()
    assert "opened the sign-in page" not in failed.intro.text()
    sent = OAuthDialog(AuthorizeRequest(browser_opened=True, **base))  # type: ignore[arg-type]
    assert "If no browser opened, use Copy link" in sent.intro.text()
    failed.close()
    sent.close()
