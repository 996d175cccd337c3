"""The server list keeps the configured order when a server restarts (it is briefly Stopped,
which removes its row; the reconnect must put it back where the config has it)."""

from __future__ import annotations

import pytest

from portico.runtime.events import Status
from portico.ui.actions import ActionId
from tests.ui.pages_helpers import command, running_app, select, status_of, write_global
from tests.ui.qt_helpers import until

pytestmark = pytest.mark.slow  # talks to real servers or processes

CONFIG = "".join(
    f"[mcp.{name}]\ncommand = {command('tiny.py', '--tools', '1')}\n\n" for name in "abc"
)


async def test_restart_keeps_the_configured_order() -> None:
    write_global(CONFIG)
    async with running_app("a", "b", "c") as desktop:
        names = lambda: [s.name for s in desktop.model.states()]  # noqa: E731
        assert names() == ["a", "b", "c"]
        for server in ("a", "b"):
            seen: list[tuple[str, Status]] = []
            desktop.bridge.statusChanged.connect(
                lambda s, seen=seen: seen.append((s.name, s.status))
            )
            select(desktop, server)
            desktop.server_action(ActionId.RESTART, server)
            await until(lambda s=server, seen=seen: (s, Status.CONNECTING) in seen, 30, "restart")
            await until(lambda s=server: status_of(desktop, s) is Status.RUNNING, 30, "running")
            assert names() == ["a", "b", "c"], f"after restarting {server}: {seen}"
            assert (server, Status.STOPPED) in seen  # its row did leave the list
            selected = desktop.window.selected_state()
            assert selected is not None and selected.name == server  # it stays selected


def test_rows_take_their_configured_place_and_the_rest_follow_in_arrival_order() -> None:
    from portico.runtime.events import ServerState
    from portico.ui.models.servers import ServerListModel

    model = ServerListModel()
    model.set_order(["a", "b", "c"])
    for name in ("x", "c", "a", "y", "b"):
        model.update_state(ServerState(name=name, status=Status.RUNNING))
    assert [s.name for s in model.states()] == ["a", "b", "c", "x", "y"]
    for name in ("a", "x", "c"):  # each leaves (Stopped) and comes back
        model.update_state(ServerState(name=name, status=Status.STOPPED))
        model.update_state(ServerState(name=name, status=Status.CONNECTING))
    assert [s.name for s in model.states()] == ["a", "b", "c", "y", "x"]
