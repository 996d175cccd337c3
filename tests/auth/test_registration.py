"""A server whose authorization server refuses registration: the login says to register
an OAuth client by hand and which keys to set, and never reports success."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from portico.auth.errors import NeedsOwnClient
from portico.auth.manager import AuthManager
from tests.helpers.oauth import Oidc, ScriptedPrompter, free_port, server_spec
from tests.servers.protected import ProtectedState

pytestmark = pytest.mark.slow  # talks to real servers or processes


def refusing_as(base: str) -> Starlette:
    async def metadata(request: Request) -> JSONResponse:
        return JSONResponse(
            {
                "issuer": base,
                "authorization_endpoint": f"{base}/authorize",
                "token_endpoint": f"{base}/token",
                "registration_endpoint": f"{base}/register",
                "response_types_supported": ["code"],
                "code_challenge_methods_supported": ["S256"],
            }
        )

    async def register(request: Request) -> JSONResponse:
        return JSONResponse({"error": "invalid_client_metadata"}, status_code=400)

    return Starlette(
        routes=[
            Route("/.well-known/oauth-authorization-server", metadata),
            Route("/register", register, methods=["POST"]),
        ]
    )


@pytest.fixture
async def refusing() -> AsyncIterator[str]:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = uvicorn.Server(
        uvicorn.Config(refusing_as(base), host="127.0.0.1", port=port, log_level="warning")
    )
    task = asyncio.create_task(server.serve())
    for _ in range(500):
        if server.started:
            break
        await asyncio.sleep(0.02)
    yield base
    server.should_exit = True
    await task


async def test_refused_registration_asks_for_own_client(
    oidc: Oidc, protected: ProtectedState, refusing: str
) -> None:
    protected.authorization_server = refusing
    prompter = ScriptedPrompter(mode="browser")
    manager = AuthManager(prompter, endpoint_policy=None)
    spec = server_spec("drive", oidc.resource)
    with pytest.raises(NeedsOwnClient) as caught:
        await manager.login(spec, browser=False)
    text = str(caught.value)
    assert "'drive'" in text
    assert "oauth.client_id" in text and "oauth.client_secret" in text
    assert "400" in text
    assert prompter.requests == []  # no browser hand-off without a client
    assert not await manager.has_token(spec)


async def test_login_signs_in_even_when_the_server_does_not_challenge(
    oidc: Oidc, protected: ProtectedState
) -> None:
    # The server answers without a token (it challenges only later, or never): `mcp login`
    # still signs in, from the protected resource's metadata.
    protected.require_auth = False
    manager = AuthManager(ScriptedPrompter(mode="browser"), endpoint_policy=None)
    spec = server_spec("open", oidc.resource)
    await manager.login(spec, browser=False)
    assert await manager.has_token(spec)
