"""The Clients view of the Servers place, in the real app with the local endpoint on:
it lists the clients `portico clients add` made, when each was last used and what it
last asked; Revoke removes the token, so the client's next request gets 401."""

from __future__ import annotations

import json
import sys

import httpx2
import pytest

from portico.paths import paths
from portico.ui.app import DesktopApp
from tests.gateway.helpers import ACCEPT, INITIALIZE, sdk_client
from tests.helpers.keyrings import MemoryKeyring
from tests.helpers.servers import TOOLBOX
from tests.ui.pages_helpers import running_app, write_global
from tests.ui.qt_helpers import until

pytestmark = pytest.mark.slow  # a real server and a real endpoint


def config(enabled: bool = True) -> None:
    command = json.dumps([sys.executable, str(TOOLBOX), "stdio"])
    write_global(f"[mcp.tb]\ncommand = {command}\n")
    paths().global_yaml.write_text(f"endpoint:\n  enabled: {'true' if enabled else 'false'}\n")


def client_names(desktop: DesktopApp) -> list[str]:
    table = desktop.pages.clients.table
    return [table.topLevelItem(i).text(0) for i in range(table.topLevelItemCount())]


async def test_the_clients_view_shows_use_and_revoke_makes_the_next_request_401(
    memory_keyring: MemoryKeyring,
) -> None:
    config()
    async with running_app("tb") as desktop:
        session = desktop.session
        assert session is not None
        endpoint = await until(lambda: session.endpoint, 30, "the endpoint to start")
        token = await desktop.runtime.submit(endpoint.book.add("claude-code"))
        await desktop.runtime.submit(endpoint.book.add("cursor"))
        await desktop.runtime.submit(endpoint.book.set_profile("cursor", ("tb",), ("tb__echo",)))
        async with sdk_client(endpoint.url, token) as client:
            await client.list_tools()

        # The tray says the endpoint is on, and where.
        on = f"Endpoint for other MCP clients: on at {endpoint.url}"
        await until(lambda: desktop.tray.endpoint_action.text() == on, 10, "the tray's line")
        assert desktop.tray.icon_tooltip.endswith("\n" + on)

        place = desktop.window.servers
        desktop.window.show_servers()
        place.clients_button.click()  # a person opens the Clients view
        page = desktop.pages.clients
        assert place.pages.currentWidget() is page
        await until(lambda: client_names(desktop) == ["claude-code", "cursor"], 10, "the clients")
        assert page.endpoint_label.text() == f"The local endpoint is on at {endpoint.url}"
        used = page.table.topLevelItem(0)
        assert used.text(2).startswith("tools/list: ok")
        assert used.text(1)[:2] == "20"  # a date: it was used
        unused = page.table.topLevelItem(1)
        assert unused.text(1) == "not since the app started"
        assert unused.text(2) == "nothing yet"
        assert used.text(3) == "all servers and tools"
        assert unused.text(3) == "servers: tb; tools: tb__echo"

        assert not page.revoke_button.isEnabled()
        used.setSelected(True)
        assert page.revoke_button.isEnabled()
        page.revoke_button.click()
        box = await until(lambda: page.confirmation, 10, "the Revoke question")
        assert box.text() == "Revoke the token of “claude-code”?"
        keep = next(b for b in box.buttons() if b.text() == "&Keep")
        keep.click()  # a second thought: nothing is revoked
        await until(lambda: page.confirmation is None, 10, "the question to close")
        assert client_names(desktop) == ["claude-code", "cursor"]
        page.revoke_button.click()
        box = await until(lambda: page.confirmation, 10, "the Revoke question again")
        next(b for b in box.buttons() if b.text() == "Re&voke").click()
        await until(lambda: client_names(desktop) == ["cursor"], 10, "claude-code revoked")

        headers = {**ACCEPT, "Authorization": f"Bearer {token}"}
        async with httpx2.AsyncClient() as http:
            refused = await http.post(endpoint.url, json=INITIALIZE, headers=headers)
        assert refused.status_code == 401

        place.clients_button.click()  # back to the server's pages
        assert place.pages.currentWidget() is place.page


async def test_with_the_endpoint_off_the_tray_and_the_view_say_so(
    memory_keyring: MemoryKeyring,
) -> None:
    config(enabled=False)
    async with running_app("tb") as desktop:
        desktop.window.show_servers()
        desktop.window.servers.clients_button.click()
        page = desktop.pages.clients
        await until(lambda: "is off" in page.endpoint_label.text(), 10, "the view's line")
        assert "endpoint.enabled" in page.endpoint_label.text()
        assert page.empty_label.isVisible() and page.table.topLevelItemCount() == 0
        assert desktop.tray.endpoint_action.text() == "Endpoint for other MCP clients: off"
        assert desktop.tray.icon_tooltip.endswith("\nEndpoint for other MCP clients: off")


async def test_a_clients_approval_while_the_window_is_hidden_is_a_desktop_notification(
    memory_keyring: MemoryKeyring,
) -> None:
    import asyncio

    config()
    async with running_app("tb") as desktop:
        session = desktop.session
        assert session is not None
        endpoint = await until(lambda: session.endpoint, 30, "the endpoint to start")
        token = await desktop.runtime.submit(endpoint.book.add("claude-code"))
        shown: list[str] = []
        desktop.tray.notified.connect(lambda title, _text, _critical: shown.append(title))
        dialogs: list[object] = []
        desktop.ensure_prompter().dialogShown.connect(dialogs.append)
        desktop.window.hide()  # closed to the tray
        async with sdk_client(endpoint.url, token, mode="legacy") as client:
            call = asyncio.ensure_future(client.call_tool("tb__echo", {"text": "hi"}))
            await until(lambda: dialogs, 30, "the approval")
            assert "claude-code asks to call tb__echo" in shown
            dialogs[0].deny_button.click()  # type: ignore[attr-defined]
            result = await asyncio.wait_for(call, 30)
        assert result.is_error
