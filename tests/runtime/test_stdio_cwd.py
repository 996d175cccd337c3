"""Where a stdio server runs: unset cwd, relative cwd (by scope), a missing folder."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

from portico.config.model import Dialect, Scope, ServerSpec, Source
from portico.runtime.connection import Connection
from portico.runtime.events import EventBus, Status
from tests.helpers.unsandboxed import agreeing_hooks

from .conftest import toolbox_spec

pytestmark = pytest.mark.slow  # talks to real servers or processes


def _placed(spec: ServerSpec, file: Path, scope: Scope) -> ServerSpec:
    return dataclasses.replace(spec, source=Source(file, 3, scope, Dialect.TOML))


async def _reported_cwd(spec: ServerSpec, bus: EventBus) -> str:
    conn = Connection(spec, bus=bus, hooks=agreeing_hooks())
    await conn.start()
    try:
        state = await conn.wait_settled(30)
        assert state.status is Status.RUNNING, state.error
        result = await conn.call_tool("cwd", {})
        return result.content[0].text
    finally:
        await conn.stop()


@pytest.mark.parametrize(
    ("scope", "cwd", "expected"),
    [
        (Scope.PROJECT, None, "project"),
        (Scope.GLOBAL, None, "home"),
        (Scope.PROJECT, "sub/dir", "project/sub/dir"),
        (Scope.GLOBAL, "sub/dir", "config/sub/dir"),
    ],
)
async def test_where_the_server_runs(
    bus: EventBus,
    project: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    scope: Scope,
    cwd: str | None,
    expected: str,
) -> None:
    home = tmp_path / "home"
    config = tmp_path / "config"
    for folder in (home, config / "sub" / "dir", project / "sub" / "dir"):
        folder.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    file = project / ".portico" / "mcp.toml" if scope is Scope.PROJECT else config / "mcp.toml"
    spec = _placed(toolbox_spec("where", cwd=cwd), file, scope)
    roots = {"project": project, "home": home, "config": config}
    head, _, rest = expected.partition("/")
    want = roots[head] / rest if rest else roots[head]
    reported = await _reported_cwd(spec, bus)
    assert reported == str(want)
    assert os.getcwd() != str(want)  # not merely inherited from the test process


async def test_a_missing_cwd_is_a_server_scoped_error(bus: EventBus, project: Path) -> None:
    file = project / ".portico" / "mcp.toml"
    spec = _placed(toolbox_spec("lost", cwd="no/such"), file, Scope.PROJECT)
    conn = Connection(spec, bus=bus, cooldown_base=60.0)
    await conn.start()
    try:
        state = await conn.wait_settled(30)
    finally:
        await conn.stop()
    assert state.status in (Status.FAILED, Status.COOLDOWN)
    error = state.error or ""
    assert error.startswith(f"{file}:3: lost.cwd: folder {project / 'no' / 'such'} does not exist")
    assert "relative to the project folder" in error


def test_the_cwd_help_says_what_the_runtime_does() -> None:
    from portico.config.schema import key

    text = key("cwd").help
    assert "project folder for project servers" in text and "home folder for global" in text
    assert "config file's folder" in text
