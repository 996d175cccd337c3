"""HTTP client building: identity header, proxies and NO_PROXY, mTLS, header secrets."""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
from collections.abc import Iterator
from pathlib import Path

import pytest

from portico.config.model import ClientCert, IdentityHeader, Protocol
from portico.runtime.connection import Connection
from portico.runtime.events import EventBus, LogLine, Status
from portico.runtime.hooks import ConnectionHooks
from portico.runtime.transports.http import identity_header
from portico.runtime.transports.proxies import ProxySettings, bypass, normalize_proxy_url
from tests.helpers.servers import Seen
from tests.helpers.servers import recording_server as start_recording_server

from .conftest import Recorder, failing_spec, make_spec, toolbox_spec

pytestmark = pytest.mark.slow  # talks to real servers or processes

# --- identity header (unit) -------------------------------------------------------------


def test_identity_header_static_and_profile() -> None:
    static = make_spec(
        "a", "http", url="http://x", identity_header=IdentityHeader("X-User", "static", "ada")
    )
    assert identity_header(static, {}, "work") == (("X-User", "ada"), None)
    profile = make_spec(
        "b", "http", url="http://x", identity_header=IdentityHeader("X-Profile", "profile")
    )
    assert identity_header(profile, {}, "work") == (("X-Profile", "work"), None)


def test_explicit_header_wins_any_casing() -> None:
    spec = make_spec(
        "a", "http", url="http://x", identity_header=IdentityHeader("X-User", "static", "ada")
    )
    assert identity_header(spec, {"x-user": "explicit"}, "p") == (None, None)


@pytest.mark.parametrize(
    ("block", "needle"),
    [
        (IdentityHeader("Bad Name", "static", "v"), "not a valid HTTP header name"),
        (IdentityHeader("X-Ok", "static", None), "needs a value"),
        (IdentityHeader("X-Ok", "static", "a\r\nInjected: 1"), "line break"),
    ],
)
def test_invalid_identity_blocks_warn_and_are_ignored(block: IdentityHeader, needle: str) -> None:
    spec = make_spec("a", "http", url="http://x", identity_header=block)
    header, warning = identity_header(spec, {}, "p")
    assert header is None
    assert warning is not None and needle in warning and "a.identity_header" in warning


def test_identity_header_on_stdio_is_ignored_with_warning() -> None:
    spec = toolbox_spec(identity_header=IdentityHeader("X-User", "static", "ada"))
    header, warning = identity_header(spec, {}, "p")
    assert header is None and "HTTP servers only" in (warning or "")


# --- proxies (unit) ---------------------------------------------------------------------


def test_socks_alias_and_scheme_less_proxy() -> None:
    assert normalize_proxy_url("socks://proxy:1080") == "socks5://proxy:1080"
    assert normalize_proxy_url("proxy.corp:3128") == "http://proxy.corp:3128"


@pytest.mark.parametrize(
    ("host", "port", "entries", "direct"),
    [
        ("api.example.com", None, ["example.com"], True),
        ("example.com", None, ["example.com"], True),
        ("notexample.com", None, ["example.com"], False),
        ("api.example.com", None, ["*.example.com"], True),
        ("example.com", None, ["*.example.com"], False),
        ("example.com", None, [".example.com"], True),
        ("10.1.2.3", None, ["10.0.0.0/8"], True),
        ("11.1.2.3", None, ["10.0.0.0/8"], False),
        ("::1", None, ["::1/128"], True),
        ("[fd00::5]", None, ["fd00::/8"], True),
        ("192.168.1.9", None, ["192.168.1.9"], True),
        ("host.corp", 8443, ["host.corp:8443"], True),
        ("host.corp", 443, ["host.corp:8443"], False),
        ("anything.org", None, ["*"], True),
        ("HOST.Example.COM", None, ["example.com"], True),
        ("service.local", None, [], False),
    ],
)
def test_no_proxy_matching(host: str, port: int | None, entries: list[str], direct: bool) -> None:
    assert bypass(host, port, entries) is direct


def test_proxy_settings_from_environ() -> None:
    env = {
        "HTTPS_PROXY": "http://secure:3128",
        "all_proxy": "socks://everything:1080",
        "NO_PROXY": "internal.corp, 10.0.0.0/8",
    }
    settings = ProxySettings.from_environ(env, use_os_settings=False)
    assert settings.https == "http://secure:3128"
    assert settings.http == "socks5://everything:1080"  # ALL_PROXY fills HTTP_PROXY
    assert settings.proxy_for("https", "api.internal.corp", None) is None
    assert settings.proxy_for("https", "10.9.9.9", None) is None
    assert settings.proxy_for("https", "mcp.example.com", None) == "http://secure:3128"


# --- against real local HTTP servers -------------------------------------------------------


@pytest.fixture
def recording_server() -> Iterator[tuple[int, Seen]]:
    with start_recording_server() as running:
        yield running


async def test_headers_secrets_and_identity_reach_the_server(
    bus: EventBus, events: Recorder, recording_server: tuple[int, Seen]
) -> None:
    port, seen = recording_server

    async def lookup(name: str) -> str | None:
        return {"api-token": "s3cret"}.get(name)

    spec = make_spec(
        "hdr",
        "http",
        url=f"http://127.0.0.1:{port}/mcp",
        protocol=Protocol.LEGACY,
        headers={"Authorization": "Bearer ${keyring:api-token}", "X-Team": "${env:TEAM}"},
        identity_header=IdentityHeader("X-Portico-Profile", "profile"),
    )
    hooks = ConnectionHooks(
        lookup_secret=lookup, environ={"TEAM": "blue"}, active_profile=lambda: "work"
    )
    conn = Connection(spec, bus=bus, hooks=hooks, cooldown_base=60)
    await conn.start()
    try:
        state = await conn.wait_settled(20)
        assert state.status is Status.COOLDOWN
        assert "HTTP 502" in (state.error or "") and "via recording server" in (state.error or "")
        assert seen.requests, "the server was never reached"
        headers = {k.lower(): v for k, v in seen.requests[0][2].items()}
        assert headers["authorization"] == "Bearer s3cret"
        assert headers["x-team"] == "blue"
        assert headers["x-portico-profile"] == "work"
    finally:
        await conn.stop()


async def test_missing_keyring_secret_is_a_permanent_failure(bus: EventBus) -> None:
    """No retry loop: the server fails once, says what to run, and waits for Retry."""
    looked_up: list[str] = []

    async def lookup(name: str) -> str | None:
        looked_up.append(name)
        return None

    spec = make_spec(
        "nokey", "http", url="http://127.0.0.1:9/mcp", headers={"Authorization": "${keyring:tok}"}
    )
    conn = Connection(
        spec, bus=bus, hooks=ConnectionHooks(lookup_secret=lookup), cooldown_base=0.05
    )
    await conn.start()
    try:
        state = await conn.wait_settled(20)
        assert state.status is Status.FAILED and state.retry_at is None
        assert "tok" in (state.error or "") and "portico secret set tok" in (state.error or "")
        await asyncio.sleep(1.0)  # twenty cooldowns' worth: nothing is tried again
        assert looked_up == ["tok"] and conn.state.status is Status.FAILED
        await conn.retry_now()  # the person stored it and pressed Retry
        for _ in range(200):
            if len(looked_up) > 1:
                break
            await asyncio.sleep(0.02)
        assert looked_up == ["tok", "tok"]
    finally:
        await conn.stop()


async def test_requests_go_through_the_proxy_unless_no_proxy(
    bus: EventBus, recording_server: tuple[int, Seen], toolbox_http
) -> None:
    proxy_port, seen = recording_server
    proxy = f"http://127.0.0.1:{proxy_port}"
    spec = make_spec("proxied", "http", url=toolbox_http.url, protocol=Protocol.LEGACY)
    through = Connection(
        spec, bus=bus, hooks=ConnectionHooks(environ={"HTTP_PROXY": proxy}), cooldown_base=60
    )
    await through.start()
    try:
        state = await through.wait_settled(20)
        assert state.status is Status.COOLDOWN
        assert "via recording server" in (state.error or "")
        # a forward proxy sees the absolute URL of the MCP endpoint
        assert seen.requests[0][1] == toolbox_http.url
    finally:
        await through.stop()

    seen.requests.clear()
    direct = Connection(
        spec,
        bus=bus,
        hooks=ConnectionHooks(environ={"HTTP_PROXY": proxy, "NO_PROXY": "127.0.0.0/8"}),
    )
    await direct.start()
    try:
        assert (await direct.wait_settled(30)).status is Status.RUNNING
        assert seen.requests == []
    finally:
        await direct.stop()


async def test_mtls_missing_file_fails_before_any_handshake(
    bus: EventBus, recording_server: tuple[int, Seen], tmp_path: Path
) -> None:
    port, seen = recording_server
    missing = tmp_path / "nope" / "client.pem"
    spec = make_spec(
        "mtls", "http", url=f"http://127.0.0.1:{port}/mcp", client_cert=ClientCert(str(missing))
    )
    conn = Connection(spec, bus=bus, cooldown_base=60)
    await conn.start()
    try:
        state = await conn.wait_settled(20)
        assert state.status is Status.COOLDOWN
        error = state.error or ""
        assert "mtls.client_cert" in error and str(missing) in error and "/tests/mcp.toml" in error
        assert seen.requests == []
    finally:
        await conn.stop()


async def test_mtls_missing_key_file(bus: EventBus, tmp_path: Path) -> None:
    cert = tmp_path / "client.pem"
    cert.write_text("not really a cert")
    spec = make_spec(
        "mtls2",
        "http",
        url="http://127.0.0.1:9/mcp",
        client_cert=ClientCert(str(cert), key=str(tmp_path / "client.key")),
    )
    conn = Connection(spec, bus=bus, cooldown_base=60)
    await conn.start()
    try:
        state = await conn.wait_settled(20)
        assert "mtls2.client_key" in (state.error or "") and "client.key" in (state.error or "")
    finally:
        await conn.stop()


async def test_identity_header_on_stdio_logs_a_warning(bus: EventBus, events: Recorder) -> None:
    spec = failing_spec("stdioid", identity_header=IdentityHeader("X-User", "static", "ada"))
    conn = Connection(spec, bus=bus, cooldown_base=60)
    await conn.start()
    try:
        await conn.wait_settled(20)
        notes = [e.text for e in events.events if isinstance(e, LogLine) and e.stream == "portico"]
        assert any("identity_header ignored" in n for n in notes)
    finally:
        await conn.stop()


async def _socks5_proxy(seen: list[tuple[str, int]]) -> asyncio.AbstractServer:
    """A minimal real SOCKS5 proxy (no auth, CONNECT only) on 127.0.0.1."""

    async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            writer.close()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        _version, count = await reader.readexactly(2)
        await reader.readexactly(count)
        writer.write(b"\x05\x00")
        _, _command, _, kind = await reader.readexactly(4)
        if kind == 1:
            host = ".".join(str(b) for b in await reader.readexactly(4))
        elif kind == 3:
            host = (await reader.readexactly((await reader.readexactly(1))[0])).decode()
        else:
            host = str(ipaddress.IPv6Address(await reader.readexactly(16)))
        port = int.from_bytes(await reader.readexactly(2), "big")
        seen.append((host, port))
        up_reader, up_writer = await asyncio.open_connection(host, port)
        writer.write(b"\x05\x00\x00\x01\x7f\x00\x00\x01" + port.to_bytes(2, "big"))
        await writer.drain()
        # A connection still open when the test's loop closes is cancelled here; on 3.11 a
        # cancelled handler makes asyncio log "Exception in callback" for its done callback.
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

    return await asyncio.start_server(handle, "127.0.0.1", 0)


async def test_socks_alias_proxy_end_to_end(bus: EventBus, toolbox_http) -> None:
    seen: list[tuple[str, int]] = []
    proxy = await _socks5_proxy(seen)
    port = proxy.sockets[0].getsockname()[1]
    spec = make_spec("socksy", "http", url=toolbox_http.url, protocol=Protocol.LEGACY)
    hooks = ConnectionHooks(environ={"ALL_PROXY": f"socks://127.0.0.1:{port}"})
    conn = Connection(spec, bus=bus, hooks=hooks)
    await conn.start()
    try:
        state = await conn.wait_settled(30)
        assert state.status is Status.RUNNING, state.error
        assert (await conn.call_tool("echo", {"text": "via socks"})).content[0].text == (
            "echo: via socks"
        )
        assert ("127.0.0.1", toolbox_http.port) in seen
    finally:
        await conn.stop()
        proxy.close()
