"""A grant that dies while the connection is running (real oidc-provider + protected server).

The access token is refused mid-session (the protected server stops accepting it, as one
that introspects would after a revocation): Portico tries its refresh token first; when
the authorization server refuses that too (``invalid_grant``), the server parks in
NeedsAuth with an AuthRequired event, never Failed/Cooldown, and nobody is asked.
"""

from __future__ import annotations

import asyncio

import pytest
from protected import ProtectedState

from portico.auth.manager import AuthManager
from portico.runtime.connection import Connection
from portico.runtime.errors import NeedsAuth
from portico.runtime.events import AuthRequired, EventBus, Status, StatusChanged
from tests.helpers.logs import AllowLogs
from tests.helpers.oauth import Oidc, ScriptedPrompter, revoke_refresh_token, server_spec

pytestmark = pytest.mark.slow  # talks to real servers or processes


async def _connected(
    name: str, oidc: Oidc
) -> tuple[AuthManager, Connection, list, ScriptedPrompter]:
    prompter = ScriptedPrompter()
    manager = AuthManager(prompter, endpoint_policy=None)
    spec = server_spec(name, oidc.resource)
    await manager.login(spec, browser=False)
    events: list = []
    bus = EventBus()
    bus.subscribe(events.append)
    connection = Connection(spec, bus=bus, hooks=manager.hooks())
    await connection.start()
    state = await connection.wait_settled(30)
    assert state.status is Status.RUNNING, state.error
    return manager, connection, events, prompter


async def test_grant_revoked_mid_session_parks_in_needs_auth(
    oidc: Oidc, protected: ProtectedState, allow_logs: AllowLogs
) -> None:
    allow_logs(r"refused to refresh the sign-in \(HTTP 400, invalid_grant\)")
    manager, connection, events, prompter = await _connected("midsession", oidc)
    try:
        tokens = await manager.storage_for(connection.spec).raw_tokens()
        assert tokens is not None
        await revoke_refresh_token(oidc, manager, connection.spec)
        protected.revoked.add(tokens.access_token)

        with pytest.raises(Exception) as caught:
            await connection.call_tool("echo", {"text": "hi"})
        assert isinstance(caught.value, NeedsAuth), repr(caught.value)
        state = await connection.wait_settled(20)
        assert state.status is Status.NEEDS_AUTH, (state.status, state.error)
        assert "portico mcp login midsession" in (state.error or "")
        assert any(isinstance(e, AuthRequired) and e.server == "midsession" for e in events)
        statuses = [e.state.status for e in events if isinstance(e, StatusChanged)]
        assert Status.FAILED not in statuses and Status.COOLDOWN not in statuses
        # The refresh token was tried and refused: background work will not send it again.
        assert await manager.storage_for(connection.spec).is_rejected()
        assert len(prompter.requests) == 1  # the first login only: nobody was asked again
    finally:
        await connection.stop()


async def test_refused_access_token_is_refreshed_mid_session(
    oidc: Oidc, protected: ProtectedState
) -> None:
    manager, connection, events, prompter = await _connected("refreshes", oidc)
    try:
        before = await manager.storage_for(connection.spec).raw_tokens()
        assert before is not None
        protected.revoked.add(before.access_token)  # the refresh token still works

        result = await connection.call_tool("echo", {"text": "hi"})
        assert result.content[0].text == "echo: hi"
        after = await manager.storage_for(connection.spec).raw_tokens()
        assert after is not None and after.access_token != before.access_token
        assert protected.seen_tokens[-1] == after.access_token
        assert connection.state.status is Status.RUNNING
        assert not any(isinstance(e, AuthRequired) for e in events)
        assert len(prompter.requests) == 1
    finally:
        await connection.stop()
    await asyncio.sleep(0)
