"""The Servers place shows a sandboxed server's badge in the list and its rules in the
Overview, against a real server running in the sandbox."""

from __future__ import annotations

import pytest

from tests.runtime.sandbox.targets import need_bwrap
from tests.ui.pages_helpers import command, running_app, select, write_global
from tests.ui.qt_helpers import until

pytestmark = pytest.mark.slow  # real servers, processes or the app


async def test_the_list_badge_and_the_overview_rules() -> None:
    need_bwrap()
    write_global(
        f"[mcp.boxed]\ncommand = {command('tiny.py', '--name', 'boxed')}\n"
        'sandbox = { enabled = true, read = ["/srv/data"] }\n\n'
        f"[mcp.open]\ncommand = {command('tiny.py', '--name', 'open')}\n"
    )
    async with running_app("boxed", "open") as desktop:
        boxed = desktop.model.index(desktop.model.row_of("boxed") or 0).data()
        assert boxed.startswith("boxed  [global · sandboxed]\nRunning"), boxed
        plain = desktop.model.index(desktop.model.row_of("open") or 0).data()
        assert plain.startswith("open  [global]\n"), plain
        select(desktop, "boxed")
        overview = desktop.pages.overview
        await until(lambda: "Sandbox" in overview.table.text(), 10, "the overview's details")
        table = overview.table.text()
        assert "may read: /srv/data" in table and "may reach: no network" in table
        select(desktop, "open")
        await until(lambda: "no sandbox" in overview.table.text(), 10, "the other server")
