"""Connection over Streamable HTTP and legacy SSE against the toolbox, plus HTTP errors."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from portico.config.model import Protocol
from portico.runtime.connection import Connection
from portico.runtime.errors import RuntimeFailure
from portico.runtime.events import EventBus, Status

from .conftest import Recorder, RunningServer, eventually, make_spec, start_toolbox, stop_server

pytestmark = pytest.mark.slow  # talks to real servers or processes


@pytest.mark.parametrize("protocol", [Protocol.AUTO, Protocol.LEGACY])
async def test_streamable_http(
    bus: EventBus, toolbox_http: RunningServer, protocol: Protocol
) -> None:
    conn = Connection(make_spec("web", "http", url=toolbox_http.url, protocol=protocol), bus=bus)
    await conn.start()
    try:
        state = await conn.wait_settled(30)
        assert state.status is Status.RUNNING, state.error
        expected = "2026-07-28" if protocol is Protocol.AUTO else "2025-11-25"
        assert conn.protocol_version == expected
        result = await conn.call_tool("echo", {"text": "over http"})
        assert result.content[0].text == "echo: over http"
        image = await conn.call_tool("image", {})
        assert image.content[0].type == "image"
    finally:
        await conn.stop()


async def test_http_10_mib_result(bus: EventBus, toolbox_http: RunningServer) -> None:
    spec = make_spec("bigweb", "http", url=toolbox_http.url, protocol=Protocol.LEGACY)
    conn = Connection(spec, bus=bus)
    await conn.start()
    try:
        assert (await conn.wait_settled(30)).status is Status.RUNNING
        # over the SDK's default 1 MiB SSE event limit, under our 10 MiB cap
        result = await conn.call_tool("big", {"mib": 9.5})
        assert len(result.content[0].text) == int(9.5 * 1024 * 1024)
        # past 10 MiB: a clear error, and the connection stays up
        with pytest.raises(Exception, match="10485760 byte limit"):
            await conn.call_tool("big", {"mib": 10.5})
        assert (await conn.call_tool("echo", {"text": "ok"})).content[0].text == "echo: ok"
    finally:
        await conn.stop()


async def test_json_responses_capped_at_10_mib(bus: EventBus) -> None:
    server = start_toolbox("http", "--json-response")
    spec = make_spec("jsonweb", "http", url=server.url, protocol=Protocol.LEGACY)
    conn = Connection(spec, bus=bus)
    await conn.start()
    try:
        assert (await conn.wait_settled(30)).status is Status.RUNNING
        result = await conn.call_tool("big", {"mib": 9.5})
        assert len(result.content[0].text) == int(9.5 * 1024 * 1024)
        with pytest.raises(Exception, match="exceeded the 10 MiB limit per HTTP response"):
            await conn.call_tool("big", {"mib": 10.5})
        assert (await conn.call_tool("echo", {"text": "ok"})).content[0].text == "echo: ok"
    finally:
        await conn.stop()
        stop_server(server)


async def test_legacy_sse_transport(bus: EventBus, toolbox_sse: RunningServer) -> None:
    conn = Connection(make_spec("old", "sse", url=toolbox_sse.url), bus=bus)
    await conn.start()
    try:
        state = await conn.wait_settled(30)
        assert state.status is Status.RUNNING, state.error
        result = await conn.call_tool("add", {"a": 20, "b": 22})
        assert result.content[0].text == "42"
        # the SDK caps a legacy SSE event at 1 MiB; our error says so
        with pytest.raises(Exception) as caught:
            await conn.call_tool("big", {"mib": 2}, timeout=10)
        assert "1 MiB" in str(caught.value) or "1048576" in str(caught.value)
    finally:
        await conn.stop()


@pytest.mark.parametrize("protocol", [Protocol.LEGACY, Protocol.AUTO])
async def test_list_changed_refreshes_tools(
    bus: EventBus, toolbox_http: RunningServer, protocol: Protocol
) -> None:
    # legacy: notifications/tools/list_changed; 2026: a subscriptions/listen stream
    spec = make_spec("flipper", "http", url=toolbox_http.url, protocol=protocol)
    conn = Connection(spec, bus=bus)
    await conn.start()
    try:
        assert (await conn.wait_settled(30)).status is Status.RUNNING
        before = {t.name for t in conn.tools}
        await conn.call_tool("flip", {})
        await eventually(lambda: {t.name for t in conn.tools} != before, what="tools change")
        after = {t.name for t in conn.tools}
        assert after ^ before == {"extra"}
        await conn.call_tool("flip", {})
        await eventually(lambda: {t.name for t in conn.tools} == before, what="flip back")
    finally:
        await conn.stop()


async def test_http_server_dies_then_failed_and_cooldown(bus: EventBus, events: Recorder) -> None:
    server = start_toolbox("http")
    spec = make_spec("fragile", "http", url=server.url, protocol=Protocol.LEGACY)
    conn = Connection(spec, bus=bus, cooldown_base=60)
    await conn.start()
    try:
        assert (await conn.wait_settled(30)).status is Status.RUNNING
        stop_server(server)
        with pytest.raises(Exception):  # noqa: B017 - any clear failure
            await conn.call_tool("echo", {"text": "anyone?"}, timeout=5)
        await conn.retry_now()
        await eventually(lambda: conn.state.status is Status.COOLDOWN, what="cooldown")
        assert conn.state.error
        assert "cannot connect" in conn.state.error or "onnect" in conn.state.error
    finally:
        await conn.stop()
        if server.proc.poll() is None:
            stop_server(server)


class _ErrorHandler(BaseHTTPRequestHandler):
    status = 500
    body = b"internal trouble: database unreachable"

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", "0")))
        self.send_response(self.status)
        self.send_header("content-type", "text/plain")
        self.send_header("content-length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    do_GET = do_POST

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def error_server() -> Iterator[tuple[str, type[_ErrorHandler]]]:
    handler = type("Handler", (_ErrorHandler,), {})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/mcp", handler
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize(("status", "body"), [(500, "internal trouble"), (401, "token expired")])
async def test_error_response_is_enriched(
    bus: EventBus, error_server: tuple[str, type[_ErrorHandler]], status: int, body: str
) -> None:
    url, handler = error_server
    handler.status = status
    full = body + " " + "z" * 400
    handler.body = full.encode()
    spec = make_spec("broken", "http", url=url, protocol=Protocol.LEGACY)
    conn = Connection(spec, bus=bus, cooldown_base=60)
    await conn.start()
    try:
        state = await conn.wait_settled(30)
        assert state.status is Status.COOLDOWN
        error = state.error or ""
        assert f"HTTP {status} from POST {url}" in error
        assert body in error
        # the body is cut at 200 characters
        assert full[:200] + ")" in error
        assert full[:201] not in error
    finally:
        await conn.stop()


async def test_call_before_running_says_why(bus: EventBus) -> None:
    spec = make_spec("nowhere", "http", url="http://127.0.0.1:9/mcp", connect_timeout=5)
    conn = Connection(spec, bus=bus, cooldown_base=60)
    await conn.start()
    try:
        state = await conn.wait_settled(20)
        assert state.status is Status.COOLDOWN
        with pytest.raises(RuntimeFailure, match="nowhere is not running"):
            await conn.call_tool("echo", {"text": "x"})
    finally:
        await conn.stop()
    await asyncio.sleep(0)


async def test_cross_origin_redirect_is_not_followed(bus: EventBus) -> None:
    class Redirect(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length", "0")))
            self.send_response(307)
            self.send_header("location", "http://127.0.0.2:9/elsewhere/mcp")
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Redirect)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}/mcp"
    conn = Connection(make_spec("moved", "http", url=url, protocol=Protocol.LEGACY), bus=bus)
    await conn.start()
    try:
        state = await conn.wait_settled(20)
        assert state.status is Status.COOLDOWN
        assert "http://127.0.0.2:9/elsewhere/mcp" in (state.error or "")
        assert "not followed" in (state.error or "")
    finally:
        await conn.stop()
        server.shutdown()
        server.server_close()
