"""Browser sign-in against a real oidc-provider and a protected MCP server."""

from __future__ import annotations

import asyncio

import pytest
from protected import ProtectedState

from portico.auth.errors import AuthError
from portico.auth.manager import AuthManager
from tests.helpers.oauth import Oidc, ScriptedPrompter, call_echo, has_needs_auth, server_spec

pytestmark = pytest.mark.slow  # talks to real servers or processes


async def test_first_login_then_connect(oidc: Oidc, protected: ProtectedState) -> None:
    prompter = ScriptedPrompter(mode="browser")
    manager = AuthManager(prompter, endpoint_policy=None)
    spec = server_spec("guarded", oidc.resource)
    await manager.login(spec, browser=False)

    assert len(prompter.requests) == 1
    request = prompter.requests[0]
    assert request.server == "guarded"
    assert request.redirect_uri.startswith("http://127.0.0.1:")
    assert request.redirect_uri.endswith("/mcp/oauth/callback")
    assert "code_challenge_method=S256" in request.authorize_url
    tokens = await manager.storage_for(spec).raw_tokens()
    assert tokens is not None and tokens.refresh_token

    # A background connect uses the stored token without asking anybody.
    assert await call_echo(manager, spec) == "echo: hi"
    assert protected.subjects and protected.subjects[-1] == "alice"
    assert len(prompter.requests) == 1


async def test_background_without_token_needs_auth(oidc: Oidc, protected: ProtectedState) -> None:
    prompter = ScriptedPrompter(mode="browser")
    manager = AuthManager(prompter, endpoint_policy=None)
    spec = server_spec("fresh", oidc.resource)
    with pytest.raises(BaseException) as caught:
        await call_echo(manager, spec)
    assert has_needs_auth(caught.value)
    assert prompter.requests == []


async def test_login_cancelled_reports_failure(oidc: Oidc, protected: ProtectedState) -> None:
    manager = AuthManager(ScriptedPrompter(mode="cancel"), endpoint_policy=None)
    spec = server_spec("cancelme", oidc.resource)
    with pytest.raises(AuthError, match="cancelled"):
        await manager.login(spec, browser=False)
    assert not await manager.has_token(spec)


async def test_connection_parks_then_picks_up_new_login(
    oidc: Oidc, protected: ProtectedState
) -> None:
    from portico.runtime.connection import Connection
    from portico.runtime.events import EventBus, Status
    from portico.runtime.hooks import ConnectionHooks

    prompter = ScriptedPrompter(mode="browser")
    manager = AuthManager(prompter, endpoint_policy=None)
    spec = server_spec("parked", oidc.resource)
    connection = Connection(spec, bus=EventBus(), hooks=ConnectionHooks(auth_for=manager.auth_for))
    await connection.start()
    try:
        state = await connection.wait_settled(30)
        assert state.status is Status.NEEDS_AUTH
        assert "portico mcp login parked" in (state.error or "")
        assert prompter.requests == []  # the background connect asked nobody

        await manager.login(spec, browser=False)
        await connection.retry_now()
        for _ in range(300):  # the owner wakes, connects with the new token
            if connection.state.status is Status.RUNNING:
                break
            await asyncio.sleep(0.05)
        assert connection.state.status is Status.RUNNING, connection.state.error
        result = await connection.call_tool("echo", {"text": "again"})
        assert result.content[0].text == "echo: again"
    finally:
        await connection.stop()


async def test_network_policy_refuses_private_endpoint_off_origin(
    oidc: Oidc, protected: ProtectedState
) -> None:
    """The default policy: a private (here loopback, plain http) authorization server on
    another origin than the MCP server is refused before it is contacted."""
    prompter = ScriptedPrompter(mode="browser")
    manager = AuthManager(prompter)
    spec = server_spec("strict", oidc.resource)
    with pytest.raises(AuthError) as caught:
        await manager.login(spec, browser=False)
    assert oidc.issuer.split("//")[1] in str(caught.value)
    assert "another origin" in str(caught.value) or "private" in str(caught.value)
    assert prompter.requests == []
    assert not await manager.has_token(spec)
