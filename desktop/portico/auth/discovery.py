"""RFC 9728 + RFC 8414 discovery outside the SDK's flow (device login, issuer checks).

Uses the SDK's own URL builders and parsers so both paths discover the same server.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import httpx2
from mcp.client.auth.utils import (
    build_oauth_authorization_server_metadata_discovery_urls,
    build_protected_resource_metadata_discovery_urls,
    create_oauth_metadata_request,
    extract_resource_metadata_from_www_auth,
    handle_auth_metadata_response,
    handle_protected_resource_response,
)
from mcp.shared.auth import OAuthMetadata, ProtectedResourceMetadata
from mcp.shared.auth_utils import check_resource_allowed, resource_url_from_server_url

from portico.auth import quirks
from portico.auth.errors import AuthError

log = logging.getLogger(__name__)


@dataclass
class Discovered:
    prm: ProtectedResourceMetadata | None
    auth_server_url: str | None
    metadata: OAuthMetadata
    resource: str
    raw: dict[str, Any]  # the document as served (fields the SDK model does not keep)

    @property
    def device_authorization_endpoint(self) -> str | None:
        value = self.raw.get("device_authorization_endpoint")
        return value if isinstance(value, str) else None

    @property
    def issuer(self) -> str:
        return str(self.metadata.issuer)

    def to_cache(self) -> dict[str, Any]:
        """What the token record keeps, so a later process skips the discovery."""
        return {
            "prm": self.prm.model_dump(mode="json", exclude_none=True) if self.prm else None,
            "auth_server_url": self.auth_server_url,
            "metadata": self.metadata.model_dump(mode="json", exclude_none=True),
            "resource": self.resource,
            "raw": self.raw,
        }

    @classmethod
    def from_cache(cls, data: dict[str, Any]) -> Discovered | None:
        """``to_cache``'s output back, or None when it does not read as one."""
        try:
            prm = data.get("prm")
            raw = data.get("raw")
            return cls(
                ProtectedResourceMetadata.model_validate(prm) if prm else None,
                data.get("auth_server_url"),
                OAuthMetadata.model_validate(data["metadata"]),
                str(data["resource"]),
                raw if isinstance(raw, dict) else {},
            )
        except (KeyError, TypeError, ValueError):
            return None


PROBE_VERSION = "2026-07-28"


def _probe_request() -> tuple[dict[str, Any], dict[str, str]]:
    """An unauthenticated, well-formed stateless request (``server/discover`` with the
    2026-07-28 ``_meta`` and headers): a server answers it with its auth challenge, and a
    strict server has nothing to complain about. Legacy servers answer it with an error,
    which is all we need to tell "needs a sign-in" from "open"."""
    from mcp_types._types import (
        CLIENT_CAPABILITIES_META_KEY,
        CLIENT_INFO_META_KEY,
        PROTOCOL_VERSION_META_KEY,
    )

    from portico import __version__

    body = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "server/discover",
        "params": {
            "_meta": {
                PROTOCOL_VERSION_META_KEY: PROBE_VERSION,
                CLIENT_CAPABILITIES_META_KEY: {},
                CLIENT_INFO_META_KEY: {"name": "portico", "version": __version__},
            }
        },
    }
    headers = {
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": PROBE_VERSION,
        "Mcp-Method": "server/discover",
    }
    return body, headers


async def probe(client: httpx2.AsyncClient, url: str) -> httpx2.Response:
    """POST the unauthenticated probe to the MCP endpoint."""
    body, headers = _probe_request()
    return await client.post(url, json=body, headers=headers)


async def discover(server: str, url: str, client: httpx2.AsyncClient) -> Discovered:
    """Find the authorization server of the MCP server at ``url``; raise ``AuthError``."""
    www_auth_url: str | None = None
    try:
        answer = await probe(client, url)
        if answer.status_code in (401, 403):
            www_auth_url = extract_resource_metadata_from_www_auth(answer)
    except httpx2.HTTPError as exc:
        raise AuthError(f"Cannot reach server '{server}' at {url}: {exc}") from exc

    prm: ProtectedResourceMetadata | None = None
    for candidate in build_protected_resource_metadata_discovery_urls(www_auth_url, url):
        response = await client.send(create_oauth_metadata_request(candidate))
        prm = await handle_protected_resource_response(response)
        if prm is not None:
            break
    resource = resource_url_from_server_url(url)
    auth_server_url: str | None = None
    if prm is not None:
        if prm.resource and check_resource_allowed(resource, str(prm.resource)):
            resource = str(prm.resource)
        auth_server_url = str(prm.authorization_servers[0])
    expected = auth_server_url
    for candidate in build_oauth_authorization_server_metadata_discovery_urls(auth_server_url, url):
        response = await client.send(create_oauth_metadata_request(candidate))
        ok, metadata = await handle_auth_metadata_response(response)
        if not ok:
            break
        if metadata is None:
            continue
        if expected is not None and not quirks.metadata_issuer_ok(
            str(metadata.issuer), expected, candidate
        ):
            raise AuthError(
                f"Authorization server metadata issuer mismatch for server '{server}': "
                f"{metadata.issuer} != {expected}"
            )
        try:
            raw = response.json()
        except ValueError:
            raw = {}
        return Discovered(
            prm, auth_server_url, metadata, resource, raw if isinstance(raw, dict) else {}
        )
    raise AuthError(
        f"Server '{server}' does not publish OAuth authorization server metadata "
        f"(tried the well-known addresses for {auth_server_url or url})."
    )


async def requires_auth(url: str, client: httpx2.AsyncClient | None = None) -> bool:
    """True when the server answers an unauthenticated request with 401 / 403.

    ``client`` (closed here): the vetted, pinned OAuth client of the server
    (``portico.auth.netguard.OAuthNet.client()``); default a plain one.
    """
    try:
        async with client or httpx2.AsyncClient(timeout=15, follow_redirects=False) as http:
            answer = await probe(http, url)
    except (httpx2.HTTPError, AuthError):
        return False  # unreachable or refused: the connection reports that itself
    return answer.status_code in (401, 403)
