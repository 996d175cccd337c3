"""The npm reference servers (as installed under tests/peers) start and work as sandboxed
project servers through the real connection, under each Linux method the machine has:
bwrap, and Landlock forced with ``PORTICO_SANDBOX_METHODS=landlock`` (as where bwrap is
missing or user namespaces are off). server-filesystem runs as a global server with its
sandbox on (a project server is offered its project as its one root, which the server
then keeps to): handed the project and the person's home as its folders, its own checks
let a read in the home through, the sandbox is what refuses it, and the same server
unsandboxed reads the file."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from portico.config.model import Protocol, SandboxSpec, Scope, ServerSpec
from portico.runtime.sandbox import probe
from tests.helpers.specs import spec_for
from tests.runtime.conftest import EVERYTHING
from tests.runtime.sandbox.targets import forcing_method, running, text

pytestmark = [pytest.mark.slow, pytest.mark.npm]

FILESYSTEM = EVERYTHING.parents[2] / "server-filesystem" / "dist" / "index.js"
# what each method's refusal of the home file reads like: bwrap does not bind it in,
# Landlock refuses the open
REFUSAL = {"bwrap": "ENOENT", "landlock": "EACCES"}


@pytest.fixture(params=["bwrap", "landlock"])
def method(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    yield from forcing_method(str(request.param), monkeypatch)


@pytest.fixture
def person_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "person"
    home.mkdir()
    (home / "secret.txt").write_text("the person's secret\n")
    monkeypatch.setenv("HOME", str(home))
    return home


def _node() -> str:
    node = shutil.which("node")
    if node is None or not EVERYTHING.exists() or not FILESYSTEM.exists():
        pytest.skip("needs node and the npm peers (tests/peers/node_modules)")
    return node


def _spec(
    name: str,
    project: Path | None,
    script: Path,
    *args: str,
    **sandbox: object,
) -> ServerSpec:
    return spec_for(
        name,
        scope=Scope.GLOBAL if project is None else Scope.PROJECT,
        project=project,
        command=_node(),
        args=[str(script), *args],
        protocol=Protocol.LEGACY,
        connect_timeout=60.0,
        sandbox=SandboxSpec(**sandbox),  # type: ignore[arg-type]
    )


async def test_server_everything_works_sandboxed(
    method: str, project: Path, person_home: Path
) -> None:
    spec = _spec("everything", project, EVERYTHING, "stdio")
    assert spec.sandboxed
    async with running(spec) as conn:
        assert "inside" in await text(conn, "echo", message="inside")
        lines = list(conn.log.lines)
    found = probe.known_method()
    assert found is not None and found.kind == method
    assert any("sandbox: Landlock, as" in line for line in lines) == (method == "landlock")


async def test_server_filesystem_reads_its_root_and_is_refused_the_home(
    method: str, project: Path, person_home: Path
) -> None:
    (project / "notes.txt").write_text("project notes\n")
    secret = str(person_home / "secret.txt")
    folders = (str(project), str(person_home))
    spec = _spec("files", None, FILESYSTEM, *folders, enabled=True, read=(str(project),))
    assert spec.sandboxed
    async with running(spec) as conn:
        listing = await text(conn, "list_directory", path=str(project))
        assert "notes.txt" in listing, listing
        notes = await text(conn, "read_text_file", path=str(project / "notes.txt"))
        assert "project notes" in notes, notes
        refused = await text(conn, "read_text_file", path=secret)
        assert REFUSAL[method] in refused and "the person's secret" not in refused, refused
        written = await text(conn, "write_file", path=str(project / "dropped.txt"), content="x")
        assert "EROFS" in written or "EACCES" in written, written
    assert not (project / "dropped.txt").exists()
    # the same server with its sandbox off reads the file: the refusal was the sandbox's
    async with running(_spec("files", None, FILESYSTEM, *folders)) as conn:
        assert "the person's secret" in await text(conn, "read_text_file", path=secret)
