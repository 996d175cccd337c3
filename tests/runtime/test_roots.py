"""Roots: a project server is offered its project folder as a file:// root through
roots/list; a global server is offered none (the capability is not declared)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from portico.config.model import Scope
from portico.runtime.connection import Connection
from portico.runtime.events import EventBus, Status
from tests.helpers.specs import asker_spec

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
    got = await _roots(Connection(replace(spec, source=source), bus=bus))
    assert got == {"roots": [project.resolve().as_uri()]}
    assert "my%20project" in str(got["roots"])  # a real file:// URI, spaces escaped


async def test_a_global_server_gets_no_roots(bus: EventBus) -> None:
    spec = asker_spec("asker")
    assert spec.source.scope is Scope.GLOBAL
    got = await _roots(Connection(spec, bus=bus))
    assert got == {"error": "the client declared no roots capability"}
