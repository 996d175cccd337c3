"""Who may talk to the endpoint: checked before the MCP SDK sees a request.

In order: a ``Host`` that is not loopback gets 421 (a DNS-rebound name); an ``Origin``
that no client is allowed to send gets 403 (a web page in a browser; a loopback
Origin, a page on this machine, passes on to the token check); a missing or
unknown bearer token gets 401 with a ``WWW-Authenticate: Bearer`` challenge; a known
token sent with an ``Origin`` that is not that client's gets 403. Every refusal is an
entry in the client activity. A request let through carries its client in the ASGI
scope's ``state`` under :data:`CLIENT_KEY`.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from portico.gateway.activity import ClientActivity
from portico.gateway.clients import Client, ClientBook, loopback_origin

CLIENT_KEY = "portico_client"
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "[::1]"})


def client_of(request: Any) -> Client | None:
    """The client a request came from (a Starlette request the SDK hands a handler)."""
    scope = getattr(request, "scope", None)
    state = scope.get("state") if isinstance(scope, dict) else None
    client = state.get(CLIENT_KEY) if isinstance(state, dict) else None
    return client if isinstance(client, Client) else None


def _host_name(host: str) -> str:
    if host.startswith("["):
        return host.split("]", 1)[0] + "]"
    return host.rsplit(":", 1)[0] if ":" in host else host


class AccessGate:
    def __init__(self, app: ASGIApp, book: ClientBook, activity: ClientActivity) -> None:
        self.app = app
        self.book = book
        self.activity = activity

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        method = f"HTTP {scope.get('method', '')}"
        server = scope.get("server")
        # A Unix socket's scope names its path (and no port): its Host is whatever the
        # client wrote, and only this user can reach the socket anyway.
        on_socket = server is None or (isinstance(server, tuple | list) and server[1] is None)
        host = headers.get("host", "")
        if not on_socket and _host_name(host) not in LOOPBACK_HOSTS:
            self.activity.refused(method, f"refused 421: Host {host!r} is not loopback")
            await _reply(send, 421, "Misdirected request: this endpoint answers loopback only.")
            return
        origin = headers.get("origin")
        if origin and not self.book.allows_origin(origin):
            self.activity.refused(method, f"refused 403: Origin {origin!r} is not allowed")
            await _reply(send, 403, f"Origin {origin!r} is not allowed for this endpoint.")
            return
        scheme, _, token = headers.get("authorization", "").partition(" ")
        client = await self.book.identify(token.strip() if scheme.lower() == "bearer" else None)
        if client is None:
            why = "no bearer token" if not token else "unknown token"
            self.activity.refused(method, f"refused 401: {why}")
            await _reply(
                send,
                401,
                "A client token is needed: run `portico connect NAME` (or "
                "`portico clients add NAME`) and send it as 'Authorization: Bearer TOKEN'.",
                challenge=True,
            )
            return
        # A loopback Origin no client claims is a page or tool on this machine; one a client
        # claims (its browser-based UI) is that client's only.
        local = origin is not None and loopback_origin(origin) and not self.book.claimed(origin)
        if not local and not client.allows_origin(origin):
            self.activity.refused(
                method, f"refused 403: Origin {origin!r} is not {client.name}'s", client.name
            )
            await _reply(send, 403, f"Origin {origin!r} is not allowed for this client.")
            return
        scope.setdefault("state", {})[CLIENT_KEY] = client
        await self.app(scope, receive, send)


async def _reply(send: Send, status: int, text: str, *, challenge: bool = False) -> None:
    body = json.dumps({"error": text}).encode("utf-8")
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if challenge:
        headers.append((b"www-authenticate", b'Bearer realm="portico", error="invalid_token"'))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
