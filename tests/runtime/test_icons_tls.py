"""Icons from an HTTPS server signed by a private CA, and from one that demands a client
certificate (mTLS): the icon fetch uses the server connection's own TLS settings
(``ca_cert``, ``client_cert``), still without cookies or auth headers."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from portico.config.model import ClientCert, ServerSpec
from portico.runtime.connection import Connection
from portico.runtime.errors import ConfigProblem
from portico.runtime.events import EventBus, Status
from portico.runtime.hooks import ConnectionHooks
from portico.runtime.icons import IconCache
from portico.runtime.transports.http import tls_context
from tests.helpers.iconic import start_iconic
from tests.helpers.pki import Pki, make_pki
from tests.helpers.servers import RunningServer, stop_server
from tests.helpers.specs import make_spec
from tests.servers.iconic import png_bytes

from .conftest import eventually

pytestmark = pytest.mark.slow  # talks to real servers or processes


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"))


def _https(server: RunningServer) -> str:
    return f"https://127.0.0.1:{server.port}/mcp"


@pytest.fixture(scope="module")
def private_ca(pki: Pki) -> Iterator[str]:
    """iconic over HTTPS with a certificate from the test CA (no client certificate)."""
    server = start_iconic("--tls-cert", str(pki.server_cert), "--tls-key", str(pki.server_key))
    yield _https(server)
    stop_server(server)


@pytest.fixture(scope="module")
def mutual(pki: Pki) -> Iterator[str]:
    """iconic over HTTPS that demands a client certificate signed by the test CA."""
    server = start_iconic(
        "--tls-cert",
        str(pki.server_cert),
        "--tls-key",
        str(pki.server_key),
        "--tls-client-ca",
        str(pki.ca),
    )
    yield _https(server)
    stop_server(server)


@pytest.fixture(autouse=True)
def _no_env_ca(monkeypatch: pytest.MonkeyPatch) -> None:
    # The trust must come from ca_cert, not from the process environment.
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)


def _read(path: str) -> bytes:
    return Path(path).read_bytes()


async def _server_icon(spec: ServerSpec, tmp_path: Path) -> bytes:
    hooks = ConnectionHooks(icon_cache=IconCache(tmp_path / "icons"))
    conn = Connection(spec, bus=EventBus(), hooks=hooks)
    await conn.start()
    try:
        state = await conn.wait_settled(30)
        assert state.status in (Status.RUNNING, Status.LAZY), state.error
        await eventually(lambda: conn.state.icon is not None, what="the server icon")
        assert conn.state.icon is not None
        return _read(conn.state.icon)
    finally:
        await conn.stop()


async def test_icons_trust_the_servers_private_ca(
    private_ca: str, pki: Pki, tmp_path: Path
) -> None:
    spec = make_spec("privca", "http", url=private_ca, ca_cert=str(pki.ca))
    assert await _server_icon(spec, tmp_path) == png_bytes()

    # Without ca_cert the same server is not trusted at all (the CA is nobody's but ours).
    bare = Connection(make_spec("noca", "http", url=private_ca), bus=EventBus(), cooldown_base=60)
    await bare.start()
    try:
        state = await bare.wait_settled(30)
    finally:
        await bare.stop()
    assert state.status is Status.COOLDOWN
    assert "certificate" in (state.error or "").lower()


async def test_icons_present_the_client_certificate_of_an_mtls_server(
    mutual: str, pki: Pki, tmp_path: Path
) -> None:
    cert = ClientCert(str(pki.client_cert), str(pki.client_key_plain))
    spec = make_spec("mtls-icons", "http", url=mutual, ca_cert=str(pki.ca), client_cert=cert)
    assert await _server_icon(spec, tmp_path) == png_bytes()


async def test_a_lazy_mtls_server_fetches_its_icons_with_its_tls(
    mutual: str, pki: Pki, tmp_path: Path
) -> None:
    """Registered from the schema cache, nothing connected yet: the icon fetch builds the
    server's TLS settings itself."""
    cert = ClientCert(str(pki.client_cert), str(pki.client_key_plain))
    spec = make_spec(
        "lazy-mtls", "http", url=mutual, ca_cert=str(pki.ca), client_cert=cert, lazy=True
    )
    first = Connection(spec, bus=EventBus())
    await first.start()
    try:
        assert (await first.wait_settled(30)).status is Status.RUNNING
    finally:
        await first.stop()
    hooks = ConnectionHooks(icon_cache=IconCache(tmp_path / "icons"))
    conn = Connection(spec, bus=EventBus(), hooks=hooks)
    await conn.start()
    try:
        assert (await conn.wait_settled(10)).status is Status.LAZY
        await eventually(lambda: conn.state.icon is not None, what="the server icon")
        assert conn.state.icon is not None and conn.pid is None
        assert _read(conn.state.icon) == png_bytes()
    finally:
        await conn.stop()


def test_a_missing_or_broken_ca_file_names_the_key(tmp_path: Path) -> None:
    spec = make_spec("badca", "http", url="https://mcp.example.com/mcp")
    with pytest.raises(ConfigProblem) as missing:
        tls_context(replace(spec, ca_cert=str(tmp_path / "nope.pem")))
    assert str(missing.value) == (
        f"/tests/mcp.toml:1: badca.ca_cert: CA file {tmp_path / 'nope.pem'} does not exist;"
        " fix the path or remove ca_cert"
    )
    junk = tmp_path / "junk.pem"
    junk.write_text("not a certificate")
    with pytest.raises(ConfigProblem, match=r"badca\.ca_cert: cannot load .*junk\.pem"):
        tls_context(replace(spec, ca_cert=str(junk)))
    assert tls_context(spec) is True  # nothing set: the system's trust
