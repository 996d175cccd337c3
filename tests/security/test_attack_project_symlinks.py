"""Attack: a project (a cloned repository: git keeps symlinks) leads its sandboxed server
out of the project through links, into the person's home. A project server's folder is
readable anyway, so a path inside it passes its review as widening nothing; and the
sandbox binds what a path leads to. Four ways in, each through a link in the project
pointing at ``~/.ssh``:

- ``link-file``: a link to the key itself, nothing configured;
- ``sandbox.read = ["./data"]``: ``data`` is a link to the folder;
- ``args = [..., "leak.js"]``: a "script" that is a link to the key (a script brings its
  folder, as the launch follows it);
- ``cwd = "./data"``: the working folder, which the sandbox binds as read-only.

The rule: **a path inside the project that leads out of it is not bound** (the project's
own folder is, links and all; what they point to is not), and the server's Log says
which; a cwd led out stops the start, with an error that says so. Under bwrap and under
Landlock, through the real connection and the prying test server; the same paths through
a plain folder still work."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from portico.runtime.connection import Connection
from portico.runtime.events import EventBus, Status
from tests.runtime.sandbox.targets import forcing_method, prying, running, text

pytestmark = pytest.mark.slow


@pytest.fixture(params=["bwrap", "landlock"])
def method(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    yield from forcing_method(str(request.param), monkeypatch)


@pytest.fixture
def ssh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "person"
    folder = home / ".ssh"
    folder.mkdir(parents=True)
    (folder / "id_rsa").write_text("PRIVATE KEY\n")
    monkeypatch.setenv("HOME", str(home))
    return folder


def _links(project: Path, ssh: Path) -> None:
    (project / "link-file").symlink_to(ssh / "id_rsa")
    (project / "data").symlink_to(ssh)
    (project / "leak.js").symlink_to(ssh / "id_rsa")


async def _reads(conn: object, *paths: Path) -> list[str]:
    return [await text(conn, "read", path=str(path)) for path in paths]  # type: ignore[arg-type]


@pytest.mark.parametrize("way", ["read", "script"])
async def test_links_out_of_the_project_lead_nowhere(
    method: str, way: str, project: Path, ssh: Path
) -> None:
    _links(project, ssh)
    key = ssh / "id_rsa"
    spec = prying(project, read=("./data",)) if way == "read" else prying(project)
    if way == "script":
        spec = replace(spec, args=(*spec.args, "leak.js"))
    async with running(spec) as conn:
        got = await _reads(conn, project / "link-file", project / "data" / "id_rsa", key)
        lines = list(conn.log.lines)
    assert not any("PRIVATE KEY" in answer for answer in got), got
    assert all(answer.startswith("refused") for answer in got), got
    what = f"{project}/data" if way == "read" else f"{project}/leak.js"
    note = f"sandbox: not bound: {what} leads out of the project to {ssh}"
    assert any(note in line for line in lines), lines


async def test_a_cwd_led_out_of_the_project_stops_the_start(
    method: str, project: Path, ssh: Path
) -> None:
    _links(project, ssh)
    conn = Connection(replace(prying(project), cwd="./data"), bus=EventBus())
    await conn.start()
    try:
        state = await conn.wait_settled(60)
    finally:
        await conn.stop()
    assert state.status is not Status.RUNNING
    assert f"its cwd {project}/data leads out of the project to {ssh}" in (state.error or "")


async def test_the_same_paths_through_plain_folders_still_work(
    method: str, project: Path, ssh: Path
) -> None:
    data = project / "data"
    data.mkdir()
    (data / "notes.txt").write_text("project data\n")
    (project / "tool.js").write_text("// a script of the project's\n")
    spec = prying(project, read=("./data",))
    spec = replace(spec, args=(*spec.args, "tool.js"), cwd="./data")
    async with running(spec) as conn:
        assert await text(conn, "read", path=str(data / "notes.txt")) == "ok: project data"
        assert await text(conn, "read", path="notes.txt") == "ok: project data"  # its cwd
        lines = list(conn.log.lines)
    assert not any("not bound" in line for line in lines), lines
