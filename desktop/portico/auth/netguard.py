"""The network side of one server's OAuth requests: vetted, pinned, same-origin redirects.

Every OAuth request Portico makes for a server (discovery, registration, token, refresh,
device polling, the unauthenticated probe) goes through an :class:`OAuthNet`:

- a request to the MCP server's own origin dials the addresses pinned at the trust review
  (``mcp_pins``, from ``ConnectionHooks.pinned_addresses``), never a fresh DNS answer;
- a request to any other origin is vetted first by the endpoint policy
  (``portico.policy.redirects.check_oauth_endpoint``), and dials the addresses that check
  resolved; the first answer for a host is kept for the life of this object;
- a redirect to another origin is refused (``AuthError`` naming both origins).

``OAuthNet.client()`` is an ``httpx2.AsyncClient`` doing all of that; ``OAuthNet.send``
sends one prepared request through a fresh such client. The auth providers send the
requests their flow makes to other origins (authorization server metadata, registration,
token) with ``send_elsewhere``, so those never ride on the MCP connection's transport,
whose pins cover the MCP host only.

Not covered: with an HTTP proxy in the way the proxy resolves names, so nothing is pinned.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import httpx2

from portico.auth.errors import AuthError
from portico.config.model import ServerSpec
from portico.policy.approvals import url_origin
from portico.policy.redirects import check_redirect
from portico.runtime.transports.pinning import live_pinned_transport

# (spec, url, *, mcp_pins) -> host -> IPs to dial (or anything else: nothing to pin)
EndpointPolicy = Callable[..., Awaitable[object]]


class OAuthNet:
    def __init__(
        self,
        spec: ServerSpec,
        policy: EndpointPolicy | None,
        mcp_pins: Mapping[str, Sequence[str]] | None = None,
        *,
        timeout: float = 30.0,
    ) -> None:
        self.spec = spec
        self.policy = policy
        self.mcp_pins = {h.lower(): list(ips) for h, ips in (mcp_pins or {}).items()}
        self.timeout = timeout
        self.mcp_origin = url_origin(spec.url) if spec.url else None
        # host -> IPs every client of this object dials (filled as origins are vetted)
        self.pins: dict[str, tuple[str, ...]] = {h: tuple(ips) for h, ips in self.mcp_pins.items()}
        self._vetted: set[str] = set()

    async def vet(self, url: str) -> None:
        """Check ``url`` with the endpoint policy (once per origin) and pin its host."""
        origin = url_origin(url)
        if origin in self._vetted:
            return
        found: object = None
        if self.policy is not None:
            try:
                found = await self.policy(self.spec, url, mcp_pins=self.mcp_pins or None)
            except AuthError:
                raise
            except Exception as exc:
                raise AuthError(str(exc)) from exc
        if isinstance(found, Mapping):
            for host, ips in found.items():
                if ips:
                    self.pins.setdefault(str(host).lower(), tuple(str(ip) for ip in ips))
        self._vetted.add(origin)

    def client(self, auth: httpx2.Auth | None = None) -> httpx2.AsyncClient:
        async def vet_request(request: httpx2.Request) -> None:
            await self.vet(str(request.url))

        async def refuse_redirect(response: httpx2.Response) -> None:
            if not response.is_redirect:
                return
            location = response.headers.get("location")
            problem = check_redirect(str(response.request.url), location) if location else None
            if problem is not None:
                raise AuthError(f"Server '{self.spec.name}': {problem}")

        hooks: dict[str, list[Callable[..., Any]]] = {
            "request": [vet_request],
            "response": [refuse_redirect],
        }
        return httpx2.AsyncClient(
            auth=auth,
            timeout=httpx2.Timeout(self.timeout),
            follow_redirects=False,
            event_hooks=hooks,
            transport=live_pinned_transport(self.pins),
        )

    async def send_elsewhere(self, request: httpx2.Request) -> httpx2.Response | None:
        """For the auth providers' ``side_send``: send a request for another origin than
        the MCP server's here; None for the MCP origin, which the client running the flow
        reaches itself (already pinned, with the server's TLS client certificate)."""
        if self.mcp_origin is not None and url_origin(str(request.url)) == self.mcp_origin:
            return None
        return await self.send(request)

    async def send(self, request: httpx2.Request) -> httpx2.Response:
        """Send one request of an OAuth flow (body read) through a vetted, pinned client."""
        async with self.client() as http:
            response = await http.send(request)
            await response.aread()
            return response
