"""The Resources tab keeps the resource on show live: the app subscribes to it, a server
update (through the event bridge) reads it again, and choosing another resource or server
unsubscribes. Real app, real chatty servers on both protocol eras."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import pytest

from portico.ui.app import DesktopApp
from tests.ui.pages_helpers import SHOWCASE, command, running_app, select, write_global
from tests.ui.qt_helpers import until

pytestmark = pytest.mark.slow  # talks to real servers or processes

URI = "memo://counter"
CONFIG = (
    SHOWCASE
    + f"""
[mcp.chatty]
command = {command("chatty.py", "stdio")}

[mcp.oldchat]
command = {command("chatty.py", "stdio")}
protocol = "legacy"
"""
)


async def _bump(desktop: DesktopApp, server: str) -> None:
    hub = desktop.session.hub
    await desktop.runtime.submit(hub.registry.call(f"{server}__bump", {}))


async def _subscriptions(desktop: DesktopApp, server: str) -> set[str] | None:
    """The URIs the server has acknowledged (None while a change is on its way: an update
    made before the server hears of the subscription is, rightly, not announced)."""
    hub = desktop.session.hub

    async def read() -> set[str] | None:
        subscriptions = hub.connection(server).subscriptions
        return None if subscriptions.pending else set(subscriptions)

    return await desktop.runtime.submit(read())


async def _eventually(desktop: DesktopApp, server: str, wanted: Callable[[set[str]], bool]) -> None:
    deadline = time.monotonic() + 30
    while (subs := await _subscriptions(desktop, server)) is None or not wanted(subs):
        assert time.monotonic() < deadline, f"{server}'s subscriptions never changed"
        await asyncio.sleep(0.05)


async def test_the_resource_on_show_follows_the_server() -> None:
    write_global(CONFIG)
    async with running_app("showcase", "chatty", "oldchat") as desktop:
        pages, tabs = desktop.pages, desktop.window.page
        res = pages.resources
        tabs.setCurrentWidget(res)
        for server in ("chatty", "oldchat"):
            select(desktop, server)
            await until(lambda s=server: res.resources and res.server == s, 30, "the resources")
            res.select_uri(URI)
            res.read_button.click()
            await until(lambda: "count 0" in res.result_view.toPlainText(), 30, "the counter")
            await _eventually(desktop, server, lambda subs: subs == {URI})
            await _bump(desktop, server)  # no Read click: the update reads it again
            await until(lambda: "count 1" in res.result_view.toPlainText(), 30, "the update")
            await _bump(desktop, server)
            await until(lambda: "count 2" in res.result_view.toPlainText(), 30, "the update")

        # another server chosen: the one left is unsubscribed, its updates change nothing
        select(desktop, "showcase")
        await until(lambda: res.resources and res.server == "showcase", 30, "showcase's list")
        for server in ("chatty", "oldchat"):
            await _eventually(desktop, server, lambda subs: not subs)
        # another resource chosen on the same server, or another address read: the same
        res.select_uri("showcase://notes")
        res.read_button.click()
        await until(lambda: "line two" in res.result_view.toPlainText(), 30, "the notes")
        await _eventually(desktop, "showcase", lambda subs: subs == {"showcase://notes"})
        res.select_uri("showcase://logo.png")
        await _eventually(desktop, "showcase", lambda subs: not subs)
        res.select_uri("showcase://notes")
        res.read_button.click()
        await _eventually(desktop, "showcase", lambda subs: subs == {"showcase://notes"})
        res.address.setText("showcase://items/7")
        res.read_button.click()
        await until(lambda: "item 7" in res.result_view.toPlainText(), 30, "the item")
        await _eventually(desktop, "showcase", lambda subs: subs == {"showcase://items/7"})
