"""The Servers place shows a sandboxed server's badge, with the method this machine
sandboxes it with (bwrap, or Landlock where bwrap cannot run), in the list, the method
and why in the list's tooltip, and its rules in the Overview, against a real server
running in the sandbox."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtCore import Qt

from portico.runtime.sandbox import probe
from tests.runtime.sandbox.targets import forcing_method
from tests.ui.pages_helpers import command, running_app, select, write_global
from tests.ui.qt_helpers import until

pytestmark = pytest.mark.slow  # real servers, processes or the app

# the tooltip's sentence for each method
SAYS = {"bwrap": "Sandbox: bwrap (", "landlock": "Sandbox: landlock (ABI "}


@pytest.fixture(params=["bwrap", "landlock"])
def method(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    yield from forcing_method(str(request.param), monkeypatch)


async def test_the_list_badge_and_the_overview_rules(method: str) -> None:
    write_global(
        f"[mcp.boxed]\ncommand = {command('tiny.py', '--name', 'boxed')}\n"
        'sandbox = { enabled = true, read = ["/srv/data"] }\n\n'
        f"[mcp.open]\ncommand = {command('tiny.py', '--name', 'open')}\n"
    )
    async with running_app("boxed", "open") as desktop:
        index = desktop.model.index(desktop.model.row_of("boxed") or 0)
        boxed = index.data()
        assert boxed.startswith(f"boxed  [global · sandboxed: {method}]\nRunning"), boxed
        tooltip = index.data(Qt.ItemDataRole.ToolTipRole)
        assert SAYS[method] in tooltip, tooltip
        if method == "landlock":
            assert f"as {probe.METHODS_ENV} asks" in tooltip, tooltip  # why not bwrap
        other = desktop.model.index(desktop.model.row_of("open") or 0)
        assert other.data().startswith("open  [global]\n"), other.data()
        assert "Sandbox" not in other.data(Qt.ItemDataRole.ToolTipRole)
        select(desktop, "boxed")
        overview = desktop.pages.overview
        await until(lambda: "Sandbox" in overview.table.text(), 10, "the overview's details")
        table = overview.table.text()
        assert "may read: /srv/data" in table and "may reach: no network" in table
        assert f"method: {method} (" in table, table
        select(desktop, "open")
        await until(lambda: "no sandbox" in overview.table.text(), 10, "the other server")
        assert "method:" not in overview.table.text()
