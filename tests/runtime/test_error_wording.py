"""Error messages: SDK log records go to the server's log, the SSE cap said once, stderr tails."""

from __future__ import annotations

import logging
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from portico.runtime.connection import Connection
from portico.runtime.errors import ServerExited
from portico.runtime.events import AuthRequired, EventBus, Status
from tests.helpers.logs import AllowLogs

from .conftest import (
    Recorder,
    RunningServer,
    free_port,
    make_spec,
    toolbox_spec,
    wait_port,
)

pytestmark = pytest.mark.slow  # talks to real servers or processes


class RootRecords(logging.Handler):
    """What the app's own logging setup (handlers on the root logger) would receive.

    (pytest's caplog also hooks non-propagating loggers directly, so it cannot tell.)
    """

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture
def root_records() -> Iterator[RootRecords]:
    handler = RootRecords()
    logging.getLogger().addHandler(handler)
    yield handler
    logging.getLogger().removeHandler(handler)


async def test_sdk_sse_traceback_goes_to_the_server_log_not_our_stderr(
    bus: EventBus,
    toolbox_sse: RunningServer,
    capfd: pytest.CaptureFixture[str],
    root_records: RootRecords,
) -> None:
    conn = Connection(make_spec("old", "sse", url=toolbox_sse.url), bus=bus)
    await conn.start()
    try:
        assert (await conn.wait_settled(30)).status is Status.RUNNING
        with pytest.raises(Exception) as caught:
            await conn.call_tool("big", {"mib": 2}, timeout=10)
    finally:
        await conn.stop()
    message = str(caught.value)
    # said once, clearly
    assert message.count("old:") == 1 and message.count("1 MiB") == 1
    assert "byte limit" not in message and ".;" not in message
    assert "legacy SSE transport" in message and "transport: http" in message
    # the library's own record is in the server's log, as one line ...
    routed = [line for line in conn.log.lines if "Encountered SSE exception" in line]
    assert routed and "SSEError" in routed[0]
    # ... and nowhere else: not on our stderr, not in the app's (root) logging
    err = capfd.readouterr().err
    assert "Encountered SSE exception" not in err and "Traceback" not in err
    assert not [r for r in root_records.records if "Encountered SSE" in r.getMessage()]


def test_records_outside_a_connection_still_reach_the_root_logger(
    root_records: RootRecords, allow_logs: AllowLogs
) -> None:
    from portico.runtime import sdklog

    allow_logs(r"^not about any server$")  # the log guard sits on the root as well

    sdklog.install()
    logging.getLogger("mcp.client.sse").warning("not about any server")
    assert [r.getMessage() for r in root_records.records] == ["not about any server"]


async def test_crash_tail_holds_only_the_servers_own_stderr(bus: EventBus) -> None:
    conn = Connection(toolbox_spec("crashy"), bus=bus, cooldown_base=60.0)
    await conn.start()
    try:
        assert (await conn.wait_settled(30)).status is Status.RUNNING
        conn.note("list-change subscription ended: a note of ours")
        with pytest.raises(ServerExited) as caught:
            await conn.call_tool("crash", {"code": 7, "message": "dying words"})
    finally:
        await conn.stop()
    assert caught.value.code == 7
    assert caught.value.stderr_tail[-1] == "dying words"
    assert not any(
        "[portico]" in line or "a note of ours" in line for line in caught.value.stderr_tail
    )
    assert str(caught.value).startswith("server exited (code 7); last stderr lines:")


async def test_url_query_never_reaches_the_connect_error(bus: EventBus) -> None:
    """Tokens some servers take as ``?api_key=`` stay out of connect errors and logs."""
    from .conftest import free_port

    base = f"http://127.0.0.1:{free_port()}/mcp"
    spec = make_spec("keyed", "http", url=f"{base}?api_key=SECRET123", connect_timeout=20.0)
    conn = Connection(spec, bus=bus, cooldown_base=60.0)
    await conn.start()
    try:
        state = await conn.wait_settled(30)
    finally:
        await conn.stop()
    assert state.status is not Status.RUNNING
    assert state.error and base in state.error
    assert "SECRET123" not in state.error and "api_key" not in state.error
    assert all("SECRET123" not in line for line in conn.log.lines)


async def test_url_query_never_reaches_the_http_status_error(
    toolbox_http: RunningServer,
) -> None:
    import httpx2

    from portico.runtime.errors import describe

    base = toolbox_http.url.rsplit("/", 1)[0] + "/no-such-endpoint"
    async with httpx2.AsyncClient() as client:
        response = await client.get(f"{base}?api_key=SECRET123")
    with pytest.raises(httpx2.HTTPStatusError) as caught:
        response.raise_for_status()
    message = describe(caught.value)
    assert f"HTTP 404 from GET {base}" in message
    assert "SECRET123" not in message and "api_key" not in message


async def test_unknown_server_error_reads_plainly() -> None:
    from portico.runtime.hub import Hub, UnknownServer

    hub = Hub()
    try:
        with pytest.raises(LookupError) as caught:
            hub.connection("x")
    finally:
        await hub.close()
    assert isinstance(caught.value, UnknownServer) and not isinstance(caught.value, KeyError)
    assert str(caught.value) == "no server named 'x' in the config (configured: none)"


NOT_MCP = Path(__file__).resolve().parents[1] / "servers" / "not_mcp.py"


def _start_not_mcp(mode: str, port: int) -> subprocess.Popen[bytes]:
    server = subprocess.Popen([sys.executable, str(NOT_MCP), mode, str(port)])
    wait_port(port, server)
    return server


@pytest.mark.parametrize(
    ("mode", "transport", "words"),
    [
        ("json", "http", ("HTTP 200", "not valid JSON", "line 1 column", "check the url")),
        ("html", "http", ("HTTP 200", "text/html", "not an MCP endpoint", "check the url")),
        ("error500", "sse", ("HTTP 500 from GET", "internal error", "try again later")),
    ],
)
async def test_a_server_that_does_not_speak_mcp_gets_one_line(
    mode: str, transport: str, words: tuple[str, ...], bus: EventBus
) -> None:
    port = free_port()
    server = _start_not_mcp(mode, port)
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        spec = make_spec("odd", transport, url=url, connect_timeout=10.0)
        conn = Connection(spec, bus=bus, cooldown_base=60.0)
        await conn.start()
        try:
            state = await conn.wait_settled(60)
        finally:
            await conn.stop()
    finally:
        server.kill()
        server.wait(10)
    error = state.error or ""
    assert state.status is Status.COOLDOWN
    assert "\n" not in error and url in error, error
    assert error.count(url) == 1 and "validation error" not in error, error
    for word in words:
        assert word in error, error


@pytest.mark.parametrize(
    ("mode", "parks"), [("bearer401", True), ("prm401", True), ("plain401", False)]
)
async def test_a_server_without_oauth_that_challenges_offers_sign_in(
    mode: str, parks: bool, bus: EventBus, events: Recorder
) -> None:
    port = free_port()
    server = _start_not_mcp(mode, port)
    try:
        spec = make_spec("locked", "http", url=f"http://127.0.0.1:{port}/mcp")
        conn = Connection(spec, bus=bus, cooldown_base=60.0)
        await conn.start()
        try:
            state = await conn.wait_settled(60)
        finally:
            await conn.stop()
    finally:
        server.kill()
        server.wait(10)
    if parks:
        assert state.status is Status.NEEDS_AUTH
        assert "portico mcp login locked" in (state.error or "")
        if mode == "prm401":  # no challenge: the well-known metadata said where to sign in
            assert "without a challenge" in (state.error or "")
            assert f"127.0.0.1:{port}/issuer" in (state.error or "")
        assert any(isinstance(e, AuthRequired) for e in events.events)
        assert Status.FAILED not in events.statuses()
    else:  # a 401 that asks for no OAuth sign-in stays a failure naming the status
        assert state.status is Status.COOLDOWN and "401" in (state.error or "")
