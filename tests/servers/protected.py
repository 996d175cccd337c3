"""An OAuth-protected MCP server for the auth tests (Streamable HTTP at ``/mcp``).

It publishes RFC 9728 protected-resource metadata naming ``state.authorization_server``
(tests switch it to simulate a server that moved to another issuer) and accepts a
request only with a JWT access token whose audience is this resource, signed by one of
``state.trusted_issuers`` (keys from the issuer's JWKS). Everything else gets a 401 with
``WWW-Authenticate: Bearer resource_metadata=...``.
"""

from __future__ import annotations

import warm_start  # noqa: F401  (first: tests/servers/warm_start.py)

# isort: split
import json
from dataclasses import dataclass, field
from typing import Any

import httpx2
import jwt
from mcp.server import MCPServer

ASGIApp = Any


@dataclass
class ProtectedState:
    resource: str  # e.g. http://127.0.0.1:PORT/mcp
    authorization_server: str
    trusted_issuers: set[str] = field(default_factory=set)
    scopes_supported: list[str] = field(default_factory=lambda: ["mcp"])
    require_auth: bool = True  # False: serves everyone (like servers that list tools openly)
    challenge: bool = True  # False: a bare 401 (no WWW-Authenticate; the metadata still served)
    accepted: int = 0  # requests that passed the token check
    rejected: int = 0
    subjects: list[str] = field(default_factory=list)
    # Access tokens this server no longer accepts (as one that introspects would see a
    # revoked grant), and every bearer token it was shown, in order.
    revoked: set[str] = field(default_factory=set)
    seen_tokens: list[str] = field(default_factory=list)
    metadata_served: int = 0  # protected-resource metadata documents served
    _jwks: dict[str, jwt.PyJWKSet] = field(default_factory=dict)

    def metadata(self) -> dict[str, Any]:
        return {
            "resource": self.resource,
            "authorization_servers": [self.authorization_server],
            "scopes_supported": self.scopes_supported,
            "bearer_methods_supported": ["header"],
        }

    async def jwks(self, issuer: str) -> jwt.PyJWKSet:
        if issuer not in self._jwks:
            async with httpx2.AsyncClient() as client:
                response = await client.get(f"{issuer}/jwks")
                response.raise_for_status()
                self._jwks[issuer] = jwt.PyJWKSet.from_dict(response.json())
        return self._jwks[issuer]

    async def check(self, token: str) -> str | None:
        """The token's subject when it is valid for this resource, else None."""
        try:
            unverified = jwt.decode(token, options={"verify_signature": False})
            issuer = unverified.get("iss")
            if issuer not in self.trusted_issuers:
                return None
            header = jwt.get_unverified_header(token)
            keys = await self.jwks(issuer)
            key = next(k for k in keys.keys if k.key_id == header.get("kid"))
            claims = jwt.decode(
                token,
                key=key.key,
                algorithms=[header["alg"]],
                audience=self.resource,
                issuer=issuer,
            )
        except Exception:
            return None
        return str(claims.get("sub") or "")


def build_mcp() -> MCPServer:
    server = MCPServer("protected")

    @server.tool(structured_output=False)
    def echo(text: str) -> str:
        """Echo the text back."""
        return f"echo: {text}"

    return server


class ProtectedApp:
    """ASGI wrapper: metadata + bearer check in front of the MCP app."""

    def __init__(self, state: ProtectedState) -> None:
        self.state = state
        self.inner = build_mcp().streamable_http_app()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.inner(scope, receive, send)
            return
        path: str = scope["path"]
        if path.startswith("/.well-known/oauth-protected-resource"):
            self.state.metadata_served += 1
            await _json(send, 200, self.state.metadata())
            return
        headers = dict(scope.get("headers") or [])
        auth = headers.get(b"authorization", b"").decode()
        subject = None
        if auth.lower().startswith("bearer "):
            token = auth[7:].strip()
            self.state.seen_tokens.append(token)
            if token not in self.state.revoked:
                subject = await self.state.check(token)
        if subject is None and not self.state.require_auth:
            await self.inner(scope, receive, send)
            return
        if subject is None:
            self.state.rejected += 1
            origin = self.state.resource.rsplit("/mcp", 1)[0]
            challenge = (
                f'Bearer resource_metadata="{origin}/.well-known/oauth-protected-resource/mcp"'
            )
            if auth:
                challenge += ', error="invalid_token"'
            extra = [(b"www-authenticate", challenge)] if self.state.challenge else []
            await _json(send, 401, {"error": "unauthorized"}, extra)
            return
        self.state.accepted += 1
        self.state.subjects.append(subject)
        await self.inner(scope, receive, send)


async def _json(
    send: Any, status: int, body: dict[str, Any], extra: list[tuple[bytes, str]] | None = None
) -> None:
    data = json.dumps(body).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
    headers += [(name, value.encode()) for name, value in extra or []]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})
