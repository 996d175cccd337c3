"""Attack: a sandboxed server reaches the person's files through /proc's magic links
instead of their paths: ``/proc/self/root`` (the root it was started from),
``/proc/<Portico's pid>/cwd`` (Portico's working folder, here the person's home) and
``/proc/<Portico's pid>/root``. Under bwrap the server has its own process numbers (no
Portico in its /proc) and its own root; under Landlock, which has neither, the links
resolve to the real files and the rules refuse them as they refuse the path itself. The
same reads unsandboxed go through: the probe can tell."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.runtime.sandbox.targets import forcing_method, prying, running, text

pytestmark = pytest.mark.slow


@pytest.fixture(params=["bwrap", "landlock"])
def method(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    yield from forcing_method(str(request.param), monkeypatch)


@pytest.fixture
def person_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "person"
    home.mkdir()
    (home / "secret.txt").write_text("the person's secret\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(home)  # Portico's working folder: /proc/<pid>/cwd leads here
    return home


def _doors(home: Path) -> list[str]:
    me = os.getpid()  # Portico's (this process starts the server)
    return [
        f"/proc/self/root{home}/secret.txt",
        f"/proc/{me}/cwd/secret.txt",
        f"/proc/{me}/root{home}/secret.txt",
    ]


async def test_proc_links_do_not_lead_out_of_the_sandbox(
    method: str, project: Path, person_home: Path
) -> None:
    async with running(prying(project)) as conn:
        got = {door: await text(conn, "read", path=door) for door in _doors(person_home)}
    assert all(answer.startswith("refused") for answer in got.values()), got
    async with running(prying(project, enabled=False)) as conn:
        for door in _doors(person_home):
            assert await text(conn, "read", path=door) == "ok: the person's secret", door
