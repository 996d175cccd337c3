"""Does a server that answered 401 without a challenge publish where to sign in?

A server should send ``WWW-Authenticate: Bearer resource_metadata=...`` with its 401;
some send a bare 401 and publish their RFC 9728 protected-resource metadata at the
well-known addresses only. :func:`find` asks those addresses (the path-suffixed one, then
the root one, as the SDK's own discovery does) on the server's origin, with the
connection's TLS settings and DNS pins; a document naming an authorization server means
"sign in", so the connection parks in NeedsAuth and offers sign-in instead of failing
over and over.
"""

from __future__ import annotations

import ssl
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

PROBE_SECONDS = 10.0


@dataclass(frozen=True)
class Found:
    url: str  # where the metadata was served
    authorization_server: str


async def find(
    server_url: str,
    *,
    pins: Mapping[str, Sequence[str]] | None = None,
    verify: ssl.SSLContext | bool = True,
) -> Found | None:
    """The protected-resource metadata at the well-known addresses of ``server_url``'s
    origin, when one serves a valid document naming an authorization server."""
    import httpx2
    from mcp.client.auth.utils import (
        build_protected_resource_metadata_discovery_urls,
        create_oauth_metadata_request,
        handle_protected_resource_response,
    )

    from portico.runtime.transports.pinning import pinned_transport

    transport = pinned_transport(pins, verify=verify, trust_env=False)
    async with httpx2.AsyncClient(
        transport=transport, timeout=PROBE_SECONDS, follow_redirects=False, trust_env=False
    ) as client:
        for candidate in build_protected_resource_metadata_discovery_urls(None, server_url):
            try:
                response = await client.send(create_oauth_metadata_request(candidate))
                metadata = await handle_protected_resource_response(response)
            except (httpx2.HTTPError, ValueError):
                continue
            if metadata is not None and metadata.authorization_servers:
                return Found(candidate, str(metadata.authorization_servers[0]))
    return None
