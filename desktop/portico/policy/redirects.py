"""Network policy for MCP and OAuth HTTP requests: no cross-origin redirects, pinned
OAuth endpoints, private OAuth endpoints only on the reviewed MCP origin.

For the auth code (``portico.auth.netguard``):

- ``check_redirect(from_url, location)`` -> None or the reason to refuse;
  ``refuse_cross_origin_redirects`` is an httpx2 ``response`` event hook doing the same.
- ``await check_oauth_endpoint(spec, endpoint_url, resolver=..., mcp_pins=...)`` resolves
  an OAuth discovery / token endpoint and returns the host -> IPs pins to dial (give them
  to :func:`portico.runtime.transports.pinning.pinned_transport`); raises
  :class:`NetworkPolicyError` for a private address on any origin other than the MCP one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING
from urllib.parse import urljoin, urlsplit

from portico.config.model import Scope, ServerSpec
from portico.policy.approvals import url_origin
from portico.policy.netcheck import (
    Resolver,
    address_class,
    never_dialled,
    resolve_host,
    system_resolver,
)

if TYPE_CHECKING:
    import httpx2


class NetworkPolicyError(Exception):
    """A request the network policy refuses; the message says why and what to do."""


def same_origin(a: str, b: str) -> bool:
    return url_origin(a) == url_origin(b)


def check_redirect(from_url: str, location: str) -> str | None:
    """None when following ``location`` from ``from_url`` is allowed (same origin)."""
    target = urljoin(from_url, location)
    if same_origin(from_url, target):
        return None
    return (
        f"{from_url} redirected to another origin ({url_origin(target)}); Portico does not "
        f"follow cross-origin redirects for MCP or OAuth requests. Put the final URL in the "
        f"config instead."
    )


async def refuse_cross_origin_redirects(response: httpx2.Response) -> None:
    """httpx2 ``event_hooks={"response": [refuse_cross_origin_redirects]}``."""
    if not response.is_redirect:
        return
    location = response.headers.get("location")
    if location is None:
        return
    problem = check_redirect(str(response.request.url), location)
    if problem is not None:
        raise NetworkPolicyError(problem)


ALLOW_PRIVATE_HINT = (
    "If it is your own local authorization server, set oauth.allow_private_endpoints: true "
    "on the server (TOML: oauth = { allow_private_endpoints = true })."
)


def allows_private_endpoints(spec: ServerSpec) -> bool:
    """``oauth.allow_private_endpoints`` (local development): private, loopback and plain
    http OAuth endpoints on other origins are let through; redirects stay same-origin."""
    return spec.oauth is not None and spec.oauth.allow_private_endpoints


async def check_oauth_endpoint(
    spec: ServerSpec,
    endpoint_url: str,
    *,
    resolver: Resolver | None = None,
    mcp_pins: Mapping[str, Sequence[str]] | None = None,
) -> dict[str, list[str]]:
    """Resolve and vet one OAuth endpoint of ``spec``; return its pins.

    On the MCP server's own origin the MCP pins (from the trust review) are reused and a
    private address is fine: that origin was reviewed. Anywhere else every resolved address
    must be public and the URL must be https.
    """
    parts = urlsplit(endpoint_url)
    host = (parts.hostname or "").lower()
    if not host:
        raise NetworkPolicyError(f"OAuth endpoint '{endpoint_url}' of '{spec.name}' has no host")
    on_mcp_origin = bool(spec.url) and same_origin(endpoint_url, spec.url or "")
    if on_mcp_origin and mcp_pins and host in mcp_pins:
        return {host: list(mcp_pins[host])}
    scheme = parts.scheme.lower()
    try:
        port = parts.port or (443 if scheme == "https" else 80)
    except ValueError as exc:
        raise NetworkPolicyError(f"OAuth endpoint '{endpoint_url}' has a bad port") from exc
    try:
        ips = await resolve_host(host, port, resolver or system_resolver)
    except (OSError, UnicodeError) as exc:
        raise NetworkPolicyError(
            f"the DNS lookup of OAuth endpoint host '{host}' of server '{spec.name}' failed "
            f"({exc}); try again when the network is back"
        ) from exc
    if not ips:
        raise NetworkPolicyError(f"OAuth endpoint host '{host}' has no address")
    reviewed = spec.source.scope is Scope.PROJECT or spec.from_link
    blocked = never_dialled(host, ips) if reviewed else None
    if blocked is not None:
        raise NetworkPolicyError(
            f"OAuth endpoint '{endpoint_url}' of project server '{spec.name}' is refused: "
            f"{blocked}, which a project server never reaches"
        )
    if on_mcp_origin or allows_private_endpoints(spec):
        return {host: list(ips)}
    for ip in ips:
        kind = address_class(ip)
        if kind is not None:
            raise NetworkPolicyError(
                f"OAuth endpoint '{endpoint_url}' of server '{spec.name}' resolves to {ip}, "
                f"{kind}; private OAuth endpoints are accepted only on the MCP server's own "
                f"origin ({url_origin(spec.url or '')}). {ALLOW_PRIVATE_HINT}"
            )
    if scheme != "https":
        raise NetworkPolicyError(
            f"OAuth endpoint '{endpoint_url}' of server '{spec.name}' is plaintext http:// "
            f"on another origin than the MCP server ({url_origin(spec.url or '')}); refused. "
            f"{ALLOW_PRIVATE_HINT}"
        )
    return {host: list(ips)}
