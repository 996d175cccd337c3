"""DNS pinning in the HTTP client: dial the pinned IP, TLS still checks the host name."""

from __future__ import annotations

import asyncio
import datetime
import ssl
from collections.abc import AsyncIterator
from pathlib import Path

import httpx2
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from portico.runtime.transports.pinning import pinned_transport


def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def make_pki(tmp: Path, host: str) -> tuple[Path, Path, Path]:
    """A CA and a server certificate for ``host``; returns (ca.pem, cert.pem, key.pem)."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (
        x509.CertificateBuilder()
        .subject_name(_name("Portico test CA"))
        .issuer_name(_name("Portico test CA"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name(host))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(host)]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    ca_pem, cert_pem, key_pem = tmp / "ca.pem", tmp / "cert.pem", tmp / "key.pem"
    ca_pem.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    cert_pem.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_pem.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return ca_pem, cert_pem, key_pem


async def serve_tls(cert: Path, key: Path) -> tuple[asyncio.Server, int, list[str]]:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    seen_sni: list[str] = []
    context.sni_callback = lambda sock, name, ctx: seen_sni.append(name or "")  # type: ignore[assignment,misc]

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await reader.readuntil(b"\r\n\r\n")
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\nConnection: close\r\n\r\npinned")
            await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, ssl.SSLError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0, ssl=context)
    port = server.sockets[0].getsockname()[1]
    return server, port, seen_sni


@pytest.fixture
async def tls_for_mcp_test(tmp_path: Path) -> AsyncIterator[tuple[int, Path, list[str]]]:
    ca, cert, key = make_pki(tmp_path, "mcp.test")
    server, port, sni = await serve_tls(cert, key)
    yield port, ca, sni
    server.close()
    await server.wait_closed()


async def test_pinned_host_dials_the_pinned_ip_and_verifies_the_name(
    tls_for_mcp_test: tuple[int, Path, list[str]],
) -> None:
    port, ca, sni = tls_for_mcp_test
    verify = ssl.create_default_context(cafile=str(ca))
    transport = pinned_transport({"mcp.test": ["127.0.0.1"]}, verify=verify, trust_env=False)
    async with httpx2.AsyncClient(transport=transport) as client:
        response = await client.get(f"https://mcp.test:{port}/")
    assert response.status_code == 200 and response.text == "pinned"
    assert sni == ["mcp.test"]  # TLS saw the host name, not the IP


async def test_pinning_does_not_weaken_certificate_checks(
    tls_for_mcp_test: tuple[int, Path, list[str]],
) -> None:
    port, ca, _sni = tls_for_mcp_test
    verify = ssl.create_default_context(cafile=str(ca))
    # the pinned IP serves a certificate for mcp.test, not for evil.test
    transport = pinned_transport({"evil.test": ["127.0.0.1"]}, verify=verify, trust_env=False)
    async with httpx2.AsyncClient(transport=transport) as client:
        with pytest.raises(httpx2.ConnectError, match=r"(?i)certificate|hostname"):
            await client.get(f"https://evil.test:{port}/")


async def test_unpinned_hosts_resolve_normally(
    tls_for_mcp_test: tuple[int, Path, list[str]],
) -> None:
    port, ca, _sni = tls_for_mcp_test
    verify = ssl.create_default_context(cafile=str(ca))
    transport = pinned_transport({"elsewhere.test": ["10.0.0.1"]}, verify=verify, trust_env=False)
    async with httpx2.AsyncClient(transport=transport) as client:
        # mcp.test is not pinned and does not resolve on this machine
        with pytest.raises(httpx2.ConnectError):
            await client.get(f"https://mcp.test:{port}/")
