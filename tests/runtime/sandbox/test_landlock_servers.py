"""The Landlock fallback through the real connection, forced by
``PORTICO_SANDBOX_METHODS=landlock`` (as where bwrap is missing or user namespaces are
off): the prying test server is refused a file in the person's home, a write outside
what it was given and a direct dial; it reads its project and reaches a declared host
through the proxy, and an undeclared one is refused. Below ABI 4 (asked for with
``PORTICO_LANDLOCK_ABI_MAX``) the network is not filtered: the person is asked first."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from portico.policy.unsandboxed import UnsandboxedConsent
from portico.runtime.connection import Connection
from portico.runtime.events import EventBus, Status
from portico.runtime.hooks import ConnectionHooks
from portico.runtime.sandbox import probe
from portico.runtime.sandbox.describe import sandbox_lines
from portico.runtime.sandbox.landlock import ABI_CAP_ENV
from tests.runtime.sandbox.targets import http_target, need_landlock, prying, running, text

pytestmark = pytest.mark.slow


@pytest.fixture
def person_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "person"
    home.mkdir()
    (home / "secret.txt").write_text("the person's secret\n")
    monkeypatch.setenv("HOME", str(home))
    return home


@pytest.fixture
def landlock_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(probe.METHODS_ENV, "landlock")
    probe.forget()
    yield
    probe.forget()


async def test_prying_server_under_landlock_is_refused_and_reads_its_project(
    tmp_path: Path, project: Path, person_home: Path, landlock_only: None
) -> None:
    need_landlock(4)
    (project / "notes.txt").write_text("project notes\n")
    allowed = tmp_path / "out"
    allowed.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    async with http_target("127.0.0.2") as target, http_target("127.0.0.3") as other:
        declared = f"127.0.0.2:{target.port}"
        spec = prying(project, write=(str(allowed),), network_allow=(declared,))
        with listener:
            async with running(spec) as conn:
                secret = await text(conn, "read", path=str(person_home / "secret.txt"))
                assert secret.startswith("refused: PermissionError"), secret
                notes = await text(conn, "read", path=str(project / "notes.txt"))
                assert notes == "ok: project notes"
                assert (await text(conn, "write", path=str(elsewhere / "x"))).startswith("refused")
                assert (await text(conn, "write", path=str(project / "x"))).startswith("refused")
                assert await text(conn, "write", path=str(allowed / "x")) == "ok"
                dial = await text(conn, "dial", host="127.0.0.1", port=port)
                assert dial.startswith("refused: PermissionError"), dial
                got = await text(conn, "fetch", url=f"http://{declared}/in")
                assert got == f"ok: GET /in HTTP/1.1|host={declared}|body=", got
                undeclared = f"127.0.0.3:{other.port}"
                refused = await text(conn, "fetch", url=f"http://{undeclared}/x")
                assert refused == "refused: HTTP 403"
                lines = list(conn.log.lines)
                shown = sandbox_lines(spec)
    assert other.connections == [] and len(target.connections) == 1
    assert (allowed / "x").read_text() == "pried"
    assert not (project / "x").exists() and not (elsewhere / "x").exists()
    assert any("sandbox: Landlock, as" in line for line in lines), lines
    assert shown[0].startswith("sandboxed with Landlock"), shown
    assert "no UDP, no raw sockets" in shown[-1], shown


class Person:
    def __init__(self, answer: bool) -> None:
        self.answer, self.asked = answer, []

    async def run_unsandboxed(self, request: object) -> bool:
        self.asked.append(getattr(request, "question", ""))
        return self.answer


async def test_below_abi_4_the_network_is_not_filtered_and_the_person_is_asked(
    tmp_path: Path,
    project: Path,
    person_home: Path,
    landlock_only: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    need_landlock()
    monkeypatch.setenv(ABI_CAP_ENV, "3")
    store = tmp_path / "state" / "unsandboxed.json"
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    with listener:
        for answer in (False, True):
            person = Person(answer)
            hooks = ConnectionHooks(unsandboxed_ok=UnsandboxedConsent(person, store))  # type: ignore[arg-type]
            conn = Connection(prying(project), bus=EventBus(), hooks=hooks)
            await conn.start()
            try:
                state = await conn.wait_settled(60)
                assert len(person.asked) == 1
                assert "cannot filter the network" in person.asked[0], person.asked
                assert "network not filtered" in person.asked[0], person.asked
                if not answer:
                    assert state.status is not Status.RUNNING
                    assert "not started" in (state.error or ""), state.error
                    continue
                assert state.status is Status.RUNNING, state.error
                secret = await text(conn, "read", path=str(person_home / "secret.txt"))
                assert secret.startswith("refused: PermissionError")  # files still bounded
                # the weaker sandbox: a dial goes out, as the question said it would
                assert await text(conn, "dial", host="127.0.0.1", port=port) == "ok"
                shown = sandbox_lines(prying(project))
                assert "network not filtered" in shown[-1], shown
            finally:
                await conn.stop()
