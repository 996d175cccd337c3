"""Machine-to-machine grants (``oauth.flow: client_credentials``) against oidc-provider.

Pre-registered clients (client_secret_basic, client_secret_post, private_key_jwt with an
EC key) connect in the background, as the hub does after a reload: nobody is asked, the
token comes from the client_credentials grant, and the protected server sees the client
as the subject. Plus the config keys in both dialects and the errors for missing keys.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
from pathlib import Path

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from protected import ProtectedState

from portico.auth.errors import AuthError
from portico.auth.machine import signing_algorithm
from portico.auth.manager import AuthManager
from portico.auth.secret_store import SecretStore
from portico.config.load import parse_text
from portico.config.model import Dialect
from portico.runtime.connection import Connection
from portico.runtime.events import AuthRequired, EventBus, Status
from tests.helpers.oauth import Oidc, ScriptedPrompter, make_oidc, serve_protected, server_spec

pytestmark = pytest.mark.slow  # talks to real servers or processes

SECRET = "machine-secret-0123456789abcdef"


def _pem(key: object) -> bytes:
    return key.private_bytes(  # type: ignore[attr-defined]
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


@pytest.fixture(scope="module")
def ec_key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


@pytest.fixture(scope="module")
def oidc(ec_key: ec.EllipticCurvePrivateKey) -> Iterator[Oidc]:
    public = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(ec_key.public_key()))
    public.update(kid="machine-key", alg="ES256", use="sig")
    machine = {"grant_types": ["client_credentials"], "redirect_uris": [], "response_types": []}
    clients = [
        {
            **machine,
            "client_id": "machine-basic",
            "client_secret": SECRET,
            "token_endpoint_auth_method": "client_secret_basic",
        },
        {
            **machine,
            "client_id": "machine-post",
            "client_secret": SECRET,
            "token_endpoint_auth_method": "client_secret_post",
        },
        {
            **machine,
            "client_id": "machine-jwt",
            "token_endpoint_auth_method": "private_key_jwt",
            "token_endpoint_auth_signing_alg": "ES256",
            "jwks": {"keys": [public]},
        },
    ]
    yield from make_oidc(clients=clients)


@pytest.fixture
async def protected(oidc: Oidc) -> AsyncIterator[ProtectedState]:
    async with serve_protected(oidc) as state:
        yield state


async def _background_connect(spec: object, protected: ProtectedState, client_id: str) -> None:
    prompter = ScriptedPrompter(mode="cancel")  # nobody there
    manager = AuthManager(prompter, endpoint_policy=None)
    events: list[object] = []
    bus = EventBus()
    bus.subscribe(events.append)
    connection = Connection(spec, bus=bus, hooks=manager.hooks())  # type: ignore[arg-type]
    await connection.start()
    try:
        state = await connection.wait_settled(30)
        assert state.status is Status.RUNNING, state.error
        result = await connection.call_tool("echo", {"text": "hi"})
        assert result.content[0].text == "echo: hi"
    finally:
        await connection.stop()
    assert protected.subjects and protected.subjects[-1] == client_id
    assert prompter.requests == [] and prompter.device_requests == []
    assert not any(isinstance(e, AuthRequired) for e in events)
    tokens = await manager.storage_for(spec).raw_tokens()  # type: ignore[arg-type]
    assert tokens is not None and tokens.access_token


@pytest.mark.parametrize(
    ("client_id", "method"),
    [("machine-basic", None), ("machine-post", "client_secret_post")],
)
async def test_client_secret_grant_connects_in_the_background(
    oidc: Oidc,
    protected: ProtectedState,
    client_id: str,
    method: str | None,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    await SecretStore().store_secret("machine-secret", SECRET)
    spec = server_spec(
        f"cc-{client_id}",
        oidc.resource,
        flow="client_credentials",
        client_id=client_id,
        client_secret="${keyring:machine-secret}",
        token_endpoint_auth_method=method,
    )
    await _background_connect(spec, protected, client_id)
    assert caplog.records and SECRET not in caplog.text
    assert not any(token in caplog.text for token in protected.seen_tokens)


async def test_private_key_jwt_grant_connects_in_the_background(
    oidc: Oidc, protected: ProtectedState, ec_key: ec.EllipticCurvePrivateKey, tmp_path: Path
) -> None:
    key = tmp_path / "client.pem"
    key.write_bytes(_pem(ec_key))
    spec = server_spec(
        "cc-jwt",
        oidc.resource,
        flow="client_credentials",
        client_id="machine-jwt",
        client_assertion_key=str(key),
    )
    await _background_connect(spec, protected, "machine-jwt")


async def test_login_runs_the_grant_and_a_wrong_secret_fails(
    oidc: Oidc, protected: ProtectedState
) -> None:
    manager = AuthManager(ScriptedPrompter(mode="cancel"), endpoint_policy=None)
    spec = server_spec(
        "cc-login",
        oidc.resource,
        flow="client_credentials",
        client_id="machine-basic",
        client_secret=SECRET,
    )
    await manager.login(spec)
    assert await manager.has_token(spec)

    wrong = replace(spec, oauth=replace(spec.oauth, client_secret="not-the-secret"))
    await manager.logout(wrong)
    with pytest.raises(AuthError) as caught:
        await manager.login(wrong)
    assert "not-the-secret" not in str(caught.value)
    assert "cc-login" in str(caught.value)


async def test_missing_keys_are_named(tmp_path: Path) -> None:
    manager = AuthManager(ScriptedPrompter(mode="cancel"), endpoint_policy=None)
    spec = server_spec("cc-bad", "http://127.0.0.1:9/mcp", flow="client_credentials")
    with pytest.raises(AuthError) as caught:
        await manager.auth_for(spec)
    text = str(caught.value)
    assert "/cfg/config.yaml:3" in text and "cc-bad" in text and "oauth.client_id" in text

    spec = server_spec(
        "cc-key",
        "http://127.0.0.1:9/mcp",
        flow="client_credentials",
        client_id="x",
        client_assertion_key=str(tmp_path / "missing.pem"),
    )
    with pytest.raises(AuthError) as caught:
        await manager.auth_for(spec)
    assert "oauth.client_assertion_key" in str(caught.value) and "missing.pem" in str(caught.value)

    spec = server_spec("xaa", "http://127.0.0.1:9/mcp", flow="cross_app", issuer="http://x")
    with pytest.raises(AuthError) as caught:
        await manager.auth_for(spec)
    for key in ("oauth.client_id", "oauth.idp_token_endpoint", "oauth.id_token"):
        assert key in str(caught.value)


def test_signing_algorithm_follows_the_key() -> None:
    assert signing_algorithm(_pem(ec.generate_private_key(ec.SECP256R1()))) == "ES256"
    assert signing_algorithm(_pem(ec.generate_private_key(ec.SECP384R1()))) == "ES384"
    assert signing_algorithm(_pem(rsa.generate_private_key(65537, 2048))) == "RS256"
    assert signing_algorithm(_pem(ed25519.Ed25519PrivateKey.generate())) == "EdDSA"
    with pytest.raises(ValueError):
        signing_algorithm(b"not a key")


YAML = """\
mcp_servers:
  m2m:
    url: https://mcp.example.com/mcp
    oauth:
      flow: client_credentials
      client_id: svc
      token_endpoint_auth_method: private_key_jwt
      client_assertion_key: keys/svc.pem
      issuer: https://auth.example.com
  xaa:
    url: https://mcp.example.com/mcp
    oauth:
      flow: cross_app
      client_id: app
      client_secret: ${keyring:app-secret}
      idp_token_endpoint: https://idp.example.com/token
      idp_client_id: portico
      idp_client_secret: ${keyring:idp-secret}
      id_token: ${env:IDP_ID_TOKEN}
"""

TOML = """\
version = 1

[mcp.m2m]
url = "https://mcp.example.com/mcp"

[mcp.m2m.oauth]
flow = "client_credentials"
client_id = "svc"
client_secret = "${keyring:s}"
token_endpoint_auth_method = "client_secret_post"
"""


def test_config_keys_in_both_dialects(tmp_path: Path) -> None:
    config = parse_text(YAML, tmp_path / "config.yaml", dialect=Dialect.YAML)
    assert not config.diagnostics, config.diagnostics
    m2m = config.server("m2m")
    assert m2m is not None and m2m.oauth is not None
    assert m2m.oauth.flow == "client_credentials"
    assert m2m.oauth.token_endpoint_auth_method == "private_key_jwt"
    assert m2m.oauth.client_assertion_key == "keys/svc.pem"
    assert m2m.oauth.issuer == "https://auth.example.com"
    xaa = config.server("xaa")
    assert xaa is not None and xaa.oauth is not None
    assert xaa.oauth.flow == "cross_app"
    assert xaa.oauth.id_token == "${env:IDP_ID_TOKEN}"  # references stay unexpanded
    assert xaa.oauth.idp_token_endpoint == "https://idp.example.com/token"
    assert (xaa.oauth.idp_client_id, xaa.oauth.idp_client_secret) == (
        "portico",
        "${keyring:idp-secret}",
    )

    config = parse_text(TOML, tmp_path / "mcp.toml", dialect=Dialect.TOML)
    assert not config.diagnostics, config.diagnostics
    spec = config.server("m2m")
    assert spec is not None and spec.oauth is not None
    assert spec.oauth.flow == "client_credentials"
    assert spec.oauth.token_endpoint_auth_method == "client_secret_post"

    bad = YAML.replace(
        "token_endpoint_auth_method: private_key_jwt", "token_endpoint_auth_method: tls"
    )
    config = parse_text(bad, tmp_path / "config.yaml", dialect=Dialect.YAML)
    assert any("token_endpoint_auth_method" in str(d) for d in config.errors)
