"""Roots: a project server is offered its project folder as a file:// root through
roots/list; a global server is offered its ``roots`` (none: the capability is not
declared), and a reload that changes them announces them without a restart."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from portico.config.model import Scope
from portico.runtime.connection import Connection
from portico.runtime.events import EventBus, Status
from portico.runtime.hub import Hub
from tests.helpers.specs import asker_spec, config_of
from tests.helpers.unsandboxed import agreeing_hooks

from .conftest import eventually

pytestmark = pytest.mark.slow  # talks to real servers or processes


async def _roots(conn: Connection) -> dict[str, object]:
    await conn.start()
    try:
        assert (await conn.wait_settled(60)).status is Status.RUNNING
        result = await conn.call_tool("roots", {})
        return dict(json.loads(result.content[0].text))
    finally:
        await conn.stop()


async def test_a_project_server_gets_its_project_folder(tmp_path: Path, bus: EventBus) -> None:
    project = tmp_path / "my project"
    (project / ".portico").mkdir(parents=True)
    spec = asker_spec("asker")
    source = replace(spec.source, path=project / ".portico" / "mcp.toml", scope=Scope.PROJECT)
    got = await _roots(Connection(replace(spec, source=source), bus=bus, hooks=agreeing_hooks()))
    assert got == {"roots": [project.resolve().as_uri()]}
    assert "my%20project" in str(got["roots"])  # a real file:// URI, spaces escaped


async def test_a_global_server_gets_no_roots(bus: EventBus) -> None:
    spec = asker_spec("asker")
    assert spec.source.scope is Scope.GLOBAL
    got = await _roots(Connection(spec, bus=bus))
    assert got == {"error": "the client declared no roots capability"}


async def test_a_global_server_gets_its_configured_roots(
    tmp_path: Path, bus: EventBus, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``roots`` on a global server: ~ expanded, in order, and only folders that exist."""
    home = tmp_path / "home"
    (home / "src").mkdir(parents=True)
    notes = tmp_path / "notes and ideas"
    notes.mkdir()
    monkeypatch.setenv("HOME", str(home))
    spec = asker_spec("asker", roots=("~/src", str(notes), str(tmp_path / "not-yet")))
    got = await _roots(Connection(spec, bus=bus))
    assert got == {"roots": [(home / "src").resolve().as_uri(), notes.resolve().as_uri()]}


async def test_a_reload_that_changes_roots_announces_them_without_a_restart(
    tmp_path: Path, bus: EventBus
) -> None:
    """Through the hub, as a config reload applies it: new roots are announced with
    notifications/roots/list_changed and the same process lists them; no roots at all
    restarts the server, which is then offered no roots capability."""
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    spec = asker_spec("asker", roots=(str(first),))
    async with Hub(bus) as hub:
        await hub.apply(config_of(spec))
        conn = hub.connection("asker")
        assert conn.state.status is Status.RUNNING
        pid = conn.pid

        async def ask(tool: str) -> str:
            result = await hub.connection("asker").call_tool(tool, {})
            return str(result.content[0].text)

        assert json.loads(await ask("roots")) == {"roots": [first.resolve().as_uri()]}
        await hub.apply(config_of(replace(spec, roots=(str(first), str(second)))))
        assert hub.connection("asker") is conn and conn.pid == pid  # no restart
        await eventually(
            lambda: any("roots changed" in line for line in conn.log.tail(20)),
            what="the announcement",
        )
        assert await ask("roots_changes") == "1"
        assert json.loads(await ask("roots")) == {
            "roots": [first.resolve().as_uri(), second.resolve().as_uri()]
        }

        await hub.apply(config_of(replace(spec, roots=())))
        again = hub.connection("asker")
        assert again is not conn and again.state.status is Status.RUNNING
        assert json.loads(await ask("roots")) == {
            "error": "the client declared no roots capability"
        }
