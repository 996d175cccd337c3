"""Machine-to-machine grants: nobody signs in, so background connects may run them.

- ``oauth.flow: client_credentials`` (SEP-1046): the SDK's ``ClientCredentialsOAuthProvider``
  (``client_secret_basic`` / ``client_secret_post``) or ``PrivateKeyJWTOAuthProvider`` with
  an assertion signed by the key in ``oauth.client_assertion_key`` (``private_key_jwt``).
- ``oauth.flow: cross_app`` (SEP-990, identity assertion): the enterprise IdP's ID token is
  exchanged at the IdP for an ID-JAG (RFC 8693 token exchange), which the SDK's
  ``IdentityAssertionOAuthProvider`` presents to the MCP authorization server (RFC 7523
  jwt-bearer grant).

Every provider here vets its OAuth requests with the network policy (``VettedFlow``).
"""

from __future__ import annotations

import base64
import json
import logging
import warnings
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Literal
from urllib.parse import quote

import httpx2
from mcp.client.auth.extensions.client_credentials import (
    ClientCredentialsOAuthProvider,
    PrivateKeyJWTOAuthProvider,
    SignedJWTParameters,
)
from mcp.client.auth.extensions.identity_assertion import IdentityAssertionOAuthProvider
from mcp.shared.exceptions import MCPDeprecationWarning

from portico.auth.errors import AuthError
from portico.auth.provider import VettedFlow, fit_secret_method
from portico.auth.token_storage import PorticoTokenStorage
from portico.config.model import OAuthSpec, ServerSpec

log = logging.getLogger(__name__)

MACHINE_FLOWS = frozenset({"client_credentials", "cross_app"})

TOKEN_EXCHANGE_GRANT = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id_token"
ID_JAG_TYPE = "urn:ietf:params:oauth:token-type:id-jag"

SecretText = Callable[[str, str], Awaitable[str]]  # (text, key) -> the resolved value
HttpFactory = Callable[[], httpx2.AsyncClient]


def is_machine_flow(spec: ServerSpec) -> bool:
    return spec.oauth is not None and spec.oauth.flow in MACHINE_FLOWS


def _where(spec: ServerSpec, key: str) -> str:
    return f"{spec.source}: server '{spec.name}', key oauth.{key}"


def _missing(spec: ServerSpec, flow: str, keys: str) -> AuthError:
    return AuthError(
        f"{spec.source}: server '{spec.name}' uses oauth.flow = {flow}, which needs {keys}; "
        "set them in the server's oauth settings (secrets as ${keyring:NAME})."
    )


class _StoredExpiry:
    """Stored tokens carry the time left (see PorticoTokenStorage.get_tokens): apply it,
    so an expired token is replaced instead of being sent as fresh."""

    async def _initialize(self) -> None:
        await super()._initialize()  # type: ignore[misc]
        context = self.context  # type: ignore[attr-defined]
        tokens = context.current_tokens
        if tokens is not None and tokens.expires_in is not None:
            context.update_token_expiry(tokens)


class ClientSecretProvider(VettedFlow, _StoredExpiry, ClientCredentialsOAuthProvider):
    """client_credentials with client_secret_basic or client_secret_post."""

    def __init__(self, *, fit_method: bool, **kwargs: Any) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MCPDeprecationWarning)  # issuer left unset
            super().__init__(**kwargs)
        self.fit_method = fit_method

    async def _perform_authorization(self) -> httpx2.Request:
        if self.fit_method:
            fit_secret_method(self.context)
        return await super()._perform_authorization()


class KeyJwtProvider(VettedFlow, _StoredExpiry, PrivateKeyJWTOAuthProvider):
    """client_credentials with private_key_jwt (RFC 7523 §2.2 client assertion)."""

    def __init__(self, **kwargs: Any) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            super().__init__(**kwargs)


class CrossAppProvider(VettedFlow, IdentityAssertionOAuthProvider):
    """The RFC 7523 jwt-bearer grant with an ID-JAG from the enterprise IdP."""


def signing_algorithm(pem: bytes) -> str:
    """The JWS algorithm that fits a PEM private key (RSA, EC P-256/384/521, Ed25519)."""
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    key = load_pem_private_key(pem, password=None)
    if isinstance(key, rsa.RSAPrivateKey):
        return "RS256"
    if isinstance(key, ec.EllipticCurvePrivateKey):
        return {"secp256r1": "ES256", "secp384r1": "ES384", "secp521r1": "ES512"}.get(
            key.curve.name, "ES256"
        )
    if isinstance(key, ed25519.Ed25519PrivateKey):
        return "EdDSA"
    raise ValueError(f"unsupported key type {type(key).__name__}")


def read_assertion_key(spec: ServerSpec) -> tuple[str, str]:
    """(PEM text, algorithm) of ``oauth.client_assertion_key``; a relative path is taken
    from the folder of the config file that defines the server."""
    oauth = spec.oauth or OAuthSpec()
    assert oauth.client_assertion_key is not None
    path = Path(oauth.client_assertion_key).expanduser()
    if not path.is_absolute():
        path = Path(spec.source.path).parent / path
    where = _where(spec, "client_assertion_key")
    try:
        pem = path.read_bytes()
    except OSError as exc:
        raise AuthError(
            f"{where}: cannot read the private key file {path} ({exc.strerror or exc}); "
            "point it at a PEM private key readable by you."
        ) from exc
    try:
        algorithm = signing_algorithm(pem)
    except (ValueError, TypeError) as exc:
        raise AuthError(
            f"{where}: {path} is not an unencrypted PEM private key (RSA, EC or Ed25519)."
        ) from exc
    return pem.decode("ascii", errors="replace"), algorithm


async def client_credentials_provider(
    spec: ServerSpec,
    storage: PorticoTokenStorage,
    secret_text: SecretText,
    endpoint_check: Callable[[str], Awaitable[object]] | None,
) -> ClientSecretProvider | KeyJwtProvider:
    oauth = spec.oauth or OAuthSpec()
    assert spec.url is not None
    if not oauth.client_id:
        raise _missing(spec, "client_credentials", "oauth.client_id")
    method = oauth.token_endpoint_auth_method
    if method is None:
        method = "private_key_jwt" if oauth.client_assertion_key else "client_secret_basic"
    provider: ClientSecretProvider | KeyJwtProvider
    if method == "private_key_jwt":
        if not oauth.client_assertion_key:
            raise _missing(spec, "client_credentials", "oauth.client_assertion_key")
        pem, algorithm = read_assertion_key(spec)
        assertion = SignedJWTParameters(
            issuer=oauth.client_id,
            subject=oauth.client_id,
            signing_key=pem,
            signing_algorithm=algorithm,
        ).create_assertion_provider()
        provider = KeyJwtProvider(
            server_url=spec.url,
            storage=storage,
            client_id=oauth.client_id,
            assertion_provider=assertion,
            scope=oauth.scope,
            issuer=oauth.issuer,
        )
    else:
        if not oauth.client_secret:
            raise _missing(spec, "client_credentials", "oauth.client_secret")
        secret = await secret_text(oauth.client_secret, "client_secret")
        chosen: Literal["client_secret_basic", "client_secret_post"] = (
            "client_secret_post" if method == "client_secret_post" else "client_secret_basic"
        )
        provider = ClientSecretProvider(
            fit_method=oauth.token_endpoint_auth_method is None,
            server_url=spec.url,
            storage=storage,
            client_id=oauth.client_id,
            client_secret=secret,
            token_endpoint_auth_method=chosen,
            scope=oauth.scope,
            issuer=oauth.issuer,
        )
    provider.endpoint_check = endpoint_check
    storage.current_issuer = lambda: _issuer_of(provider)
    return provider


def _issuer_of(provider: Any) -> str | None:
    metadata = provider.context.oauth_metadata
    return str(metadata.issuer) if metadata is not None else None


async def cross_app_provider(
    spec: ServerSpec,
    storage: PorticoTokenStorage,
    secret_text: SecretText,
    endpoint_check: Callable[[str], Awaitable[object]] | None,
    http: HttpFactory,
    issuer: str,
) -> CrossAppProvider:
    """``issuer``: ``oauth.issuer``, else the authorization server the MCP server names."""
    oauth = spec.oauth or OAuthSpec()
    assert spec.url is not None
    needed = [
        name
        for name, value in (
            ("oauth.client_id", oauth.client_id),
            ("oauth.client_secret", oauth.client_secret),
            ("oauth.idp_token_endpoint", oauth.idp_token_endpoint),
            ("oauth.id_token", oauth.id_token),
        )
        if not value
    ]
    if needed:
        raise _missing(spec, "cross_app", ", ".join(needed))
    assert oauth.client_id and oauth.client_secret
    secret = await secret_text(oauth.client_secret, "client_secret")
    method: Literal["client_secret_basic", "client_secret_post"] = (
        "client_secret_post"
        if oauth.token_endpoint_auth_method == "client_secret_post"
        else "client_secret_basic"
    )

    async def id_jag(audience: str, resource: str) -> str:
        return await exchange_for_id_jag(
            spec, secret_text, endpoint_check, http, audience=audience, resource=resource
        )

    provider = CrossAppProvider(
        server_url=spec.url,
        storage=storage,
        client_id=oauth.client_id,
        client_secret=secret,
        issuer=issuer,
        assertion_provider=id_jag,
        scope=oauth.scope,
        token_endpoint_auth_method=method,
    )
    provider.endpoint_check = endpoint_check
    storage.current_issuer = lambda: issuer
    return provider


async def exchange_for_id_jag(
    spec: ServerSpec,
    secret_text: SecretText,
    endpoint_check: Callable[[str], Awaitable[object]] | None,
    http: HttpFactory,
    *,
    audience: str,
    resource: str,
) -> str:
    """RFC 8693 token exchange at the IdP: the ID token in, an ID-JAG for ``audience``
    (the MCP authorization server) and ``resource`` (the MCP server) out."""
    oauth = spec.oauth or OAuthSpec()
    assert oauth.idp_token_endpoint and oauth.id_token
    id_token = await secret_text(oauth.id_token, "id_token")
    data = {
        "grant_type": TOKEN_EXCHANGE_GRANT,
        "subject_token": id_token,
        "subject_token_type": ID_TOKEN_TYPE,
        "requested_token_type": ID_JAG_TYPE,
        "audience": audience,
        "resource": resource,
    }
    if oauth.scope:
        data["scope"] = oauth.scope
    headers = {"Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"}
    if oauth.idp_client_secret and oauth.idp_client_id:
        idp_secret = await secret_text(oauth.idp_client_secret, "idp_client_secret")
        pair = f"{quote(oauth.idp_client_id, safe='')}:{quote(idp_secret, safe='')}"
        headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
    elif oauth.idp_client_id:
        data["client_id"] = oauth.idp_client_id
    endpoint = oauth.idp_token_endpoint
    if endpoint_check is not None:
        await endpoint_check(endpoint)
    try:
        async with http() as client:
            response = await client.post(endpoint, data=data, headers=headers)
    except httpx2.HTTPError as exc:
        raise AuthError(
            f"Server '{spec.name}': cannot reach the identity provider at {endpoint}: {exc}"
        ) from exc
    try:
        body: Any = json.loads(response.content or b"{}")
    except ValueError:
        body = {}
    if not isinstance(body, dict):
        body = {}
    if response.status_code != 200:
        error = body.get("error") if isinstance(body.get("error"), str) else "no error code"
        raise AuthError(
            f"Server '{spec.name}': the identity provider at {endpoint} refused the token "
            f"exchange (HTTP {response.status_code}, {error}); check oauth.id_token and "
            "oauth.idp_client_id (an expired ID token needs a new one)."
        )
    token = body.get("access_token")
    issued = body.get("issued_token_type")
    if not isinstance(token, str) or issued != ID_JAG_TYPE:
        raise AuthError(
            f"Server '{spec.name}': the identity provider at {endpoint} answered the token "
            f"exchange without an ID-JAG (issued_token_type {issued!r})."
        )
    log.info("server '%s': exchanged the ID token for an ID-JAG at %s", spec.name, endpoint)
    return token
