"""A working mTLS handshake: our own CA, an HTTPS toolbox that demands a client certificate."""

from __future__ import annotations

import datetime
import ipaddress
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from portico.config.model import ClientCert
from portico.runtime.connection import Connection
from portico.runtime.events import EventBus, Status

from .conftest import TOOLBOX, free_port, make_spec, wait_port

pytestmark = pytest.mark.slow  # talks to real servers or processes

KEY_PASSWORD = "s3cret-pass"


@dataclass
class Pki:
    ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path  # encrypted with KEY_PASSWORD
    client_key_plain: Path


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


def _issue(
    subject: str,
    key: ec.EllipticCurvePrivateKey,
    issuer: tuple[x509.Name, ec.EllipticCurvePrivateKey] | None,
    *,
    ca: bool = False,
    usage: x509.ObjectIdentifier | None = None,
) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    issuer_name, issuer_key = issuer if issuer is not None else (_name(subject), key)
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(subject))
        .issuer_name(issuer_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if ca:
        builder = builder.add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        ).add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
    else:
        builder = builder.add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(issuer_key.public_key()),
            critical=False,
        )
    if usage is not None:
        builder = builder.add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
    if usage == ExtendedKeyUsageOID.SERVER_AUTH:
        builder = builder.add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
    return builder.sign(issuer_key, hashes.SHA256())


def _pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def _key(key: ec.EllipticCurvePrivateKey, password: str | None = None) -> bytes:
    encryption: serialization.KeySerializationEncryption = (
        serialization.BestAvailableEncryption(password.encode())
        if password
        else serialization.NoEncryption()
    )
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption
    )


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    folder = tmp_path_factory.mktemp("pki")
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = _issue("Portico Test CA", ca_key, None, ca=True)
    issuer = (ca.subject, ca_key)
    server_key = ec.generate_private_key(ec.SECP256R1())
    server = _issue("127.0.0.1", server_key, issuer, usage=ExtendedKeyUsageOID.SERVER_AUTH)
    client_key = ec.generate_private_key(ec.SECP256R1())
    client = _issue("portico-client", client_key, issuer, usage=ExtendedKeyUsageOID.CLIENT_AUTH)
    files = {
        "ca.pem": _pem(ca),
        "server.pem": _pem(server),
        "server.key": _key(server_key),
        "client.pem": _pem(client),
        "client.key": _key(client_key, KEY_PASSWORD),
        "client-plain.key": _key(client_key),
    }
    for name, data in files.items():
        (folder / name).write_bytes(data)
    return Pki(
        folder / "ca.pem",
        folder / "server.pem",
        folder / "server.key",
        folder / "client.pem",
        folder / "client.key",
        folder / "client-plain.key",
    )


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
