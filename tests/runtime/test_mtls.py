"""A working mTLS handshake: our own CA, an HTTPS toolbox that demands a client certificate."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest

from portico.config.model import ClientCert
from portico.runtime.connection import Connection
from portico.runtime.events import EventBus, Status
from tests.helpers.pki import KEY_PASSWORD, Pki, make_pki

from .conftest import TOOLBOX, free_port, make_spec, wait_port

pytestmark = pytest.mark.slow  # talks to real servers or processes


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"))


@pytest.fixture(scope="module")
def https_url(pki: Pki) -> Iterator[str]:
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            str(TOOLBOX),
            "http",
            "--port",
            str(port),
            "--tls-cert",
            str(pki.server_cert),
            "--tls-key",
            str(pki.server_key),
            "--tls-client-ca",
            str(pki.ca),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_port(port, proc)
        yield f"https://127.0.0.1:{port}/mcp"
    finally:
        proc.kill()
        proc.wait(timeout=10)


@pytest.fixture
def trust_test_ca(pki: Pki, monkeypatch: pytest.MonkeyPatch) -> None:
    # A private CA the way an enterprise machine trusts one: OpenSSL's SSL_CERT_FILE.
    monkeypatch.setenv("SSL_CERT_FILE", str(pki.ca))


@pytest.mark.usefixtures("trust_test_ca")
async def test_mtls_with_a_password_protected_key_from_env(
    bus: EventBus, pki: Pki, https_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PORTICO_TEST_KEY_PASS", KEY_PASSWORD)
    cert = ClientCert(str(pki.client_cert), str(pki.client_key), "${env:PORTICO_TEST_KEY_PASS}")
    conn = Connection(make_spec("mtls", "http", url=https_url, client_cert=cert), bus=bus)
    await conn.start()
    try:
        state = await conn.wait_settled(30)
        assert state.status is Status.RUNNING, state.error
        result = await conn.call_tool("echo", {"text": "over mutual TLS"})
        assert result.content[0].text == "echo: over mutual TLS"
    finally:
        await conn.stop()


@pytest.mark.usefixtures("trust_test_ca")
async def test_mtls_plain_key_works_and_no_cert_is_refused(
    bus: EventBus, pki: Pki, https_url: str
) -> None:
    plain = ClientCert(str(pki.client_cert), str(pki.client_key_plain))
    good = Connection(make_spec("mtls-plain", "http", url=https_url, client_cert=plain), bus=bus)
    bare = Connection(make_spec("no-cert", "http", url=https_url), bus=bus, cooldown_base=60)
    await good.start()
    await bare.start()
    try:
        assert (await good.wait_settled(30)).status is Status.RUNNING
        refused = await bare.wait_settled(30)
        # the server demands a client certificate: without one there is no session
        assert refused.status is Status.COOLDOWN and refused.error
    finally:
        await good.stop()
        await bare.stop()


async def test_wrong_key_password_is_a_clear_error(
    bus: EventBus, pki: Pki, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PORTICO_TEST_KEY_PASS", "not-the-password")
    cert = ClientCert(str(pki.client_cert), str(pki.client_key), "${env:PORTICO_TEST_KEY_PASS}")
    spec = make_spec("badpass", "http", url="https://127.0.0.1:9/mcp", client_cert=cert)
    conn = Connection(spec, bus=bus, cooldown_base=60)
    await conn.start()
    try:
        state = await conn.wait_settled(20)
    finally:
        await conn.stop()
    assert state.status is Status.COOLDOWN
    assert (state.error or "").startswith("/tests/mcp.toml:1: badpass.client_cert: cannot load")
