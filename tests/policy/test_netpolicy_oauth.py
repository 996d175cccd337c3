"""The OAuth network policy end to end, with the endpoint policy ON (as in the product).

A project HTTP server on 127.0.0.1, named 'mcp.portico.test' (a name only our resolver
knows), is reviewed and trusted; it is protected by a client-credentials grant. Its
authorization server is either on the same origin (accepted: the reviewed origin, dialled
at the reviewed address) or on another loopback port (refused, naming the endpoint and
the rule). Every OAuth request must use the pins of the review: once reviewed, the name
is taken out of the resolver, so a fresh DNS lookup anywhere would fail.
"""

from __future__ import annotations

import asyncio
import base64
import json
import secrets
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

import httpx2
import pytest
import uvicorn
from mcp.server import MCPServer
from mcp.server.transport_security import TransportSecuritySettings

from portico.auth.errors import AuthError
from portico.auth.manager import AuthManager
from portico.auth.netguard import OAuthNet
from portico.config.model import OAuthSpec, Scope, Transport
from portico.policy.redirects import check_oauth_endpoint
from portico.policy.setup import Policy
from portico.prompts import TrustChoice
from portico.runtime.events import Status
from portico.runtime.hub import Hub
from tests.helpers.dns import Dns

from .conftest import ScriptedPerson, config_of, spec_for

pytestmark = pytest.mark.slow  # talks to real servers or processes

MCP_HOST = "mcp.portico.test"
AUTH_HOST = "auth.portico.test"
CLIENT_ID = "portico-machine"
CLIENT_SECRET = "machine-secret-42"


@dataclass
class Site:
    """One origin: an MCP endpoint at /mcp guarded by bearer tokens, its RFC 9728
    metadata, and an authorization server (metadata + client_credentials token endpoint)."""

    port: int
    origin: str = ""  # how clients name this site, e.g. http://mcp.portico.test:PORT
    authorization_server: str = ""  # the AS the metadata names
    issued: set[str] = field(default_factory=set)
    hits: list[tuple[str, str]] = field(default_factory=list)  # (path, Host header)
    inner: Any = None

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.inner(scope, receive, send)
            return
        path: str = scope["path"]
        headers = {k.decode(): v.decode() for k, v in scope.get("headers") or []}
        self.hits.append((path, headers.get("host", "")))
        if path.startswith("/.well-known/oauth-protected-resource"):
            await _json(
                send,
                200,
                {
                    "resource": f"{self.origin}/mcp",
                    "authorization_servers": [self.authorization_server],
                },
            )
            return
        if path.startswith("/.well-known/oauth-authorization-server"):
            await _json(
                send,
                200,
                {
                    "issuer": self.origin,
                    "authorization_endpoint": f"{self.origin}/authorize",
                    "token_endpoint": f"{self.origin}/token",
                    "response_types_supported": ["code"],
                    "grant_types_supported": ["client_credentials"],
                    "token_endpoint_auth_methods_supported": ["client_secret_basic"],
                },
            )
            return
        if path.startswith("/.well-known/"):
            await _json(send, 404, {"error": "not_found"})
            return
        if path == "/token":
            expected = base64.b64encode(f"{CLIENT_ID}:{CLIENT_SECRET}".encode()).decode()
            if headers.get("authorization") != f"Basic {expected}":
                await _json(send, 401, {"error": "invalid_client"})
                return
            token = secrets.token_urlsafe(16)
            self.issued.add(token)
            await _json(
                send, 200, {"access_token": token, "token_type": "Bearer", "expires_in": 3600}
            )
            return
        if path == "/away":
            await send(
                {
                    "type": "http.response.start",
                    "status": 302,
                    "headers": [(b"location", b"http://elsewhere.portico.test/x")],
                }
            )
            await send({"type": "http.response.body", "body": b""})
            return
        auth = headers.get("authorization", "")
        if not (auth.startswith("Bearer ") and auth[7:] in self.issued):
            challenge = (
                f'Bearer resource_metadata="{self.origin}/.well-known/oauth-protected-resource/mcp"'
            )
            await _json(send, 401, {"error": "unauthorized"}, [(b"www-authenticate", challenge)])
            return
        await self.inner(scope, receive, send)


async def _json(
    send: Any, status: int, body: dict[str, Any], extra: list[tuple[bytes, str]] | None = None
) -> None:
    data = json.dumps(body).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
    headers += [(name, value.encode()) for name, value in extra or []]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _mcp_app() -> Any:
    server = MCPServer("guarded")

    @server.tool(structured_output=False)
    def echo(text: str) -> str:
        """Echo the text back."""
        return f"echo: {text}"

    return server.streamable_http_app(
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False)
    )


@asynccontextmanager
async def serve(site: Site) -> AsyncIterator[Site]:
    site.inner = _mcp_app()
    config = uvicorn.Config(
        site, host="127.0.0.1", port=site.port, log_level="warning", lifespan="on"
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    for _ in range(250):
        if server.started:
            break
        await asyncio.sleep(0.02)
    try:
        yield site
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 10)


@pytest.fixture
async def sites() -> AsyncIterator[tuple[Site, Site]]:
    mcp_port, auth_port = _free_port(), _free_port()
    mcp = Site(mcp_port, origin=f"http://{MCP_HOST}:{mcp_port}")
    other = Site(auth_port, origin=f"http://{AUTH_HOST}:{auth_port}")
    async with serve(mcp), serve(other):
        yield mcp, other


def machine_spec(project: Path, url: str, name: str = "guarded"):  # type: ignore[no-untyped-def]
    return spec_for(
        name,
        scope=Scope.PROJECT,
        project=project,
        transport=Transport.HTTP,
        url=url,
        connect_timeout=20.0,
        oauth=OAuthSpec(
            flow="client_credentials", client_id=CLIENT_ID, client_secret=CLIENT_SECRET
        ),
    )


def services(person: ScriptedPerson, dns: Dns) -> tuple[Policy, AuthManager, Any]:
    """The product's wiring (as portico.services.build_services), with our resolver for
    both the trust review and the OAuth endpoint policy, which stays ON."""
    policy = Policy(person, resolver=dns)
    auth = AuthManager(person, endpoint_policy=partial(check_oauth_endpoint, resolver=dns))
    return policy, auth, auth.hooks(policy.hooks())


async def test_same_origin_authorization_server_uses_the_reviewed_pins(
    sites: tuple[Site, Site], project: Path, person: ScriptedPerson
) -> None:
    mcp, _other = sites
    mcp.authorization_server = mcp.origin  # same origin: accepted
    dns = Dns({MCP_HOST: ["127.0.0.1"]})
    _policy, auth, hooks = services(person, dns)
    assert auth.endpoint_policy is not None  # the policy is on
    spec = machine_spec(project, f"{mcp.origin}/mcp")

    def reviewed(request: Any) -> TrustChoice:
        # from now on only the review's pins can reach the server
        del dns.table[MCP_HOST]
        return TrustChoice.ONCE

    person.add("review_trust", reviewed)
    async with Hub(hooks=hooks) as hub:
        await hub.apply(config_of(spec))
        state = hub.connection("guarded").state
        assert state.status is Status.RUNNING, state.error
        result = await hub.registry.call("guarded__echo", {"text": "hi"})
        assert "echo: hi" in result.text()
    assert dns.lookups == [MCP_HOST]  # the review's lookup only: every request was pinned
    paths = [path for path, _host in mcp.hits]
    assert "/token" in paths and any(
        p.startswith("/.well-known/oauth-authorization") for p in paths
    )
    assert {host for _path, host in mcp.hits} == {f"{MCP_HOST}:{mcp.port}"}
    assert len(mcp.issued) == 1


async def test_other_loopback_origin_is_refused_naming_endpoint_and_rule(
    sites: tuple[Site, Site], project: Path, person: ScriptedPerson
) -> None:
    mcp, other = sites
    mcp.authorization_server = other.origin  # another origin on a loopback address
    dns = Dns({MCP_HOST: ["127.0.0.1"], AUTH_HOST: ["127.0.0.1"]})
    _policy, _auth, hooks = services(person, dns)
    spec = machine_spec(project, f"{mcp.origin}/mcp")
    person.add("review_trust", TrustChoice.ONCE)
    async with Hub(hooks=hooks) as hub:
        await hub.apply(config_of(spec))
        state = hub.connection("guarded").state
        assert state.status is not Status.RUNNING
        error = state.error or ""
        assert f"OAuth endpoint '{other.origin}/.well-known/oauth-authorization-server'" in error
        assert "resolves to 127.0.0.1, a loopback address" in error
        assert (
            "private OAuth endpoints are accepted only on the MCP server's own origin "
            f"(http://{MCP_HOST}:{mcp.port})" in error
        )
    assert other.hits == []  # never contacted
    assert mcp.issued == set()


async def test_allow_private_endpoints_is_a_reviewed_per_server_setting(
    sites: tuple[Site, Site], project: Path, person: ScriptedPerson
) -> None:
    """oauth.allow_private_endpoints lets the local authorization server through for that
    server only, and the trust review names it as a reason."""
    mcp, other = sites
    mcp.authorization_server = other.origin
    mcp.issued = other.issued  # the MCP server accepts what its authorization server issues
    dns = Dns({MCP_HOST: ["127.0.0.1"], AUTH_HOST: ["127.0.0.1"]})
    _policy, _auth, hooks = services(person, dns)
    base = machine_spec(project, f"{mcp.origin}/mcp")
    assert base.oauth is not None
    spec = replace(base, oauth=replace(base.oauth, allow_private_endpoints=True))
    person.add("review_trust", TrustChoice.ONCE)
    async with Hub(hooks=hooks) as hub:
        await hub.apply(config_of(spec))
        state = hub.connection("guarded").state
        assert state.status is Status.RUNNING, state.error
    (request,) = person.requests("review_trust")
    assert any("oauth.allow_private_endpoints" in reason for reason in request.reasons)
    assert any(path == "/token" for path, _host in other.hits)  # the local AS was used
    assert len(other.issued) == 1


async def test_refusal_names_the_setting(project: Path) -> None:
    spec = machine_spec(project, "https://mcp.example.com/mcp")
    dns = Dns({"auth.example.com": ["10.0.0.7"]})
    with pytest.raises(Exception, match=r"oauth\.allow_private_endpoints: true") as info:
        await check_oauth_endpoint(spec, "https://auth.example.com/token", resolver=dns)
    assert "allow_private_endpoints = true" in str(info.value)
    assert spec.oauth is not None
    allowed = replace(spec, oauth=replace(spec.oauth, allow_private_endpoints=True))
    pins = await check_oauth_endpoint(allowed, "http://auth.example.com/token", resolver=dns)
    assert pins == {"auth.example.com": ["10.0.0.7"]}


async def test_unauthenticated_probe_uses_the_reviewed_pins(
    sites: tuple[Site, Site], project: Path, person: ScriptedPerson
) -> None:
    """A browser-flow server without a token parks in NeedsAuth: the 401 probe reached the
    server through the review's pins (the name no longer resolves anywhere)."""
    mcp, _other = sites
    mcp.authorization_server = mcp.origin
    dns = Dns({MCP_HOST: ["127.0.0.1"]})
    _policy, _auth, hooks = services(person, dns)
    spec = spec_for(
        "browser",
        scope=Scope.PROJECT,
        project=project,
        transport=Transport.HTTP,
        url=f"{mcp.origin}/mcp",
        connect_timeout=20.0,
        oauth=OAuthSpec(),
    )

    def reviewed(request: Any) -> TrustChoice:
        del dns.table[MCP_HOST]
        return TrustChoice.ONCE

    person.add("review_trust", reviewed)
    async with Hub(hooks=hooks) as hub:
        await hub.apply(config_of(spec))
        state = hub.connection("browser").state
        assert state.status is Status.NEEDS_AUTH, state.error
    assert ("/mcp", f"{MCP_HOST}:{mcp.port}") in mcp.hits
    assert dns.lookups == [MCP_HOST]


async def test_oauth_client_refuses_cross_origin_redirects_and_pins_vetted_hosts(
    sites: tuple[Site, Site], project: Path
) -> None:
    mcp, other = sites
    dns = Dns({AUTH_HOST: ["127.0.0.1"]})
    spec = machine_spec(project, f"{mcp.origin}/mcp")
    # no policy (a developer's PORTICO_OAUTH_ALLOW_PRIVATE=1): still pinned, still no
    # cross-origin redirect
    net = OAuthNet(spec, None, {MCP_HOST: ["127.0.0.1"]})
    async with net.client() as http:
        with pytest.raises(AuthError) as caught:
            await http.get(f"{mcp.origin}/away")
    assert "redirected to another origin (http://elsewhere.portico.test:80)" in str(caught.value)
    assert "does not follow cross-origin redirects" in str(caught.value)
    # a vetted endpoint on another origin is dialled at the address the check resolved
    # (the policy here accepts loopback to show the pin; the product's refuses it)

    async def lenient(spec: Any, url: str, *, mcp_pins: Any = None) -> dict[str, list[str]]:
        return {AUTH_HOST: await dns(AUTH_HOST, 0)}

    net = OAuthNet(spec, lenient, {MCP_HOST: ["127.0.0.1"]})
    async with net.client() as http:
        first = await http.get(f"{other.origin}/.well-known/oauth-authorization-server")
        dns.table.clear()  # a later answer cannot move it: no new lookup is made
        again = await http.get(f"{other.origin}/.well-known/oauth-authorization-server")
    assert first.status_code == again.status_code == 200
    assert dns.lookups == [AUTH_HOST]
    assert net.pins[AUTH_HOST] == ("127.0.0.1",)
    # what the auth providers do with the requests of their flow: other origins are sent
    # here (pinned); the MCP origin is left to the connection's own (pinned) client
    token_request = httpx2.Request("POST", f"{other.origin}/token")
    sent = await net.send_elsewhere(token_request)
    assert sent is not None and sent.status_code == 401  # reached: no client credentials
    assert await net.send_elsewhere(httpx2.Request("GET", f"{mcp.origin}/mcp")) is None
    assert dns.lookups == [AUTH_HOST]
