"""Project stdio servers run sandboxed through the real connection: the prying test
server is refused the person's home, writes outside what it was given and a dial, and
reads its project; it reaches a declared host through the proxy, and an undeclared one is
refused and named in its log. The npm servers: test_npm_servers."""

from __future__ import annotations

import glob
import socket
from dataclasses import replace
from pathlib import Path

import pytest

from portico.config.model import Scope
from portico.runtime.activity import SANDBOX_LEARNED, SANDBOX_REFUSED
from tests.runtime.sandbox.targets import http_target, need_bwrap, prying, running, text

pytestmark = pytest.mark.slow


@pytest.fixture
def person_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "person"
    home.mkdir()
    (home / "secret.txt").write_text("the person's secret\n")
    monkeypatch.setenv("HOME", str(home))
    return home


async def test_prying_server_is_refused_each_time_and_reads_its_project(
    tmp_path: Path, project: Path, person_home: Path
) -> None:
    need_bwrap()
    (project / "notes.txt").write_text("project notes\n")
    allowed = tmp_path / "out"
    allowed.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    with listener:
        spec = prying(project, write=(str(allowed),))
        assert spec.sandboxed
        async with running(spec) as conn:
            assert (await text(conn, "read", path=str(person_home / "secret.txt"))).startswith(
                "refused: FileNotFoundError"
            )
            assert await text(conn, "read", path=str(project / "notes.txt")) == "ok: project notes"
            assert (await text(conn, "write", path=str(elsewhere / "x"))).startswith("refused")
            assert (await text(conn, "write", path=str(project / "x"))).startswith("refused")
            assert await text(conn, "write", path=str(allowed / "x")) == "ok"
            assert (await text(conn, "dial", host="127.0.0.1", port=port)).startswith("refused")
        # the same server with its sandbox off does all of it: the refusals above are the
        # sandbox's
        async with running(prying(project, enabled=False)) as conn:
            secret = await text(conn, "read", path=str(person_home / "secret.txt"))
            assert secret == "ok: the person's secret"
            assert await text(conn, "write", path=str(elsewhere / "x")) == "ok"
            assert await text(conn, "dial", host="127.0.0.1", port=port) == "ok"
    assert (allowed / "x").read_text() == "pried"
    assert not (project / "x").exists()


async def test_a_declared_host_is_reached_and_an_undeclared_one_refused_and_logged(
    project: Path, person_home: Path
) -> None:
    need_bwrap()
    before = _proxy_folders()
    async with http_target("127.0.0.2") as target, http_target("127.0.0.3") as other:
        declared = f"127.0.0.2:{target.port}"
        spec = prying(project, network_allow=(declared,))
        async with running(spec) as conn:
            got = await text(conn, "fetch", url=f"http://{declared}/in")
            assert got == f"ok: GET /in HTTP/1.1|host={declared}|body=", got
            undeclared = f"127.0.0.3:{other.port}"
            assert await text(conn, "fetch", url=f"http://{undeclared}/x") == "refused: HTTP 403"
            assert (await text(conn, "dial", host="127.0.0.2", port=target.port)).startswith(
                "refused"
            )  # only through the proxy
            lines = list(conn.log.lines)
            refusals = [e.message for e in conn.activity.entries() if e.method == SANDBOX_REFUSED]
            during = _proxy_folders()
        assert other.connections == [] and len(target.connections) == 1
    assert during - before, "the proxy's folder while it ran"
    assert not (during - before) & _proxy_folders(), "left behind"
    refusal = f"sandbox: refused a connection to 127.0.0.3:{other.port}"
    assert any(refusal in line for line in lines), lines
    # and in its Activity, with the entry that would allow it
    allow = f"127.0.0.3:{other.port}"
    params = {"host": "127.0.0.3", "port": other.port, "allow": allow}
    assert refusals == [{"jsonrpc": "2.0", "method": SANDBOX_REFUSED, "params": params}]


async def test_learn_mode_lets_every_host_through_and_reports_each(
    tmp_path: Path, person_home: Path
) -> None:
    """``sandbox.network.learn`` (yours only): a host not in allow is reached, and named
    in the server's Log and Activity with the entry that would allow it."""
    need_bwrap()
    async with http_target("127.0.0.2") as target, http_target("127.0.0.3") as other:
        declared = f"127.0.0.2:{target.port}"
        spec = replace(
            prying(tmp_path, network_allow=(declared,), enabled=True, network_learn=True),
            source=replace(prying(tmp_path).source, scope=Scope.GLOBAL),
        )
        assert spec.sandbox_learns
        async with running(spec) as conn:
            undeclared = f"127.0.0.3:{other.port}"
            got = await text(conn, "fetch", url=f"http://{undeclared}/x")
            assert got.startswith("ok: GET /x"), got
            assert (await text(conn, "fetch", url=f"http://{declared}/in")).startswith("ok:")
            lines = list(conn.log.lines)
            learned = [e.message for e in conn.activity.entries() if e.method == SANDBOX_LEARNED]
        assert len(other.connections) == 1
    note = f"sandbox (learn mode): let through a connection to {undeclared}"
    assert any(note in line for line in lines), lines
    assert not any("refused a connection" in line for line in lines), lines
    params = {"host": "127.0.0.3", "port": other.port, "allow": undeclared}
    assert learned == [{"jsonrpc": "2.0", "method": SANDBOX_LEARNED, "params": params}]


def _proxy_folders() -> set[Path]:
    return {Path(p) for p in glob.glob("/tmp/portico-net-*")}
