"""Refresh after expiry, a revoked grant parking the server, and re-login.

Expiry is decided on the AuthManager's clock, so the tests move that clock past the
access token's lifetime instead of waiting for it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
from protected import ProtectedState

from portico.auth.manager import AuthManager
from tests.helpers.logs import AllowLogs
from tests.helpers.oauth import (
    Clock,
    Oidc,
    ScriptedPrompter,
    call_echo,
    has_needs_auth,
    make_oidc,
    revoke_refresh_token,
    serve_protected,
    server_spec,
)

pytestmark = pytest.mark.slow  # talks to real servers or processes

ACCESS_TTL = 300  # seconds: nothing expires unless a test moves the clock


@pytest.fixture(scope="module")
def oidc() -> Iterator[Oidc]:
    yield from make_oidc(accessTtl=ACCESS_TTL)


@pytest.fixture
async def protected(oidc: Oidc) -> AsyncIterator[ProtectedState]:
    async with serve_protected(oidc) as state:
        yield state


async def test_refresh_after_expiry_in_a_new_process(oidc: Oidc, protected: ProtectedState) -> None:
    spec = server_spec("short", oidc.resource)
    clock = Clock()
    first = AuthManager(ScriptedPrompter(), endpoint_policy=None, clock=clock)
    await first.login(spec, browser=False)
    # a later process, nobody there
    manager = AuthManager(ScriptedPrompter(mode="cancel"), endpoint_policy=None, clock=clock)
    before = await manager.storage_for(spec).raw_tokens()
    assert before is not None
    assert await call_echo(manager, spec) == "echo: hi"  # still valid: no refresh yet
    same = await manager.storage_for(spec).raw_tokens()
    assert same is not None and same.access_token == before.access_token
    clock.advance(ACCESS_TTL + 1)

    assert await call_echo(manager, spec) == "echo: hi"
    after = await manager.storage_for(spec).raw_tokens()
    assert after is not None and after.access_token != before.access_token
    assert after.refresh_token  # kept (or rotated) for the next time


async def test_revoked_grant_parks_until_new_login(
    oidc: Oidc, protected: ProtectedState, allow_logs: AllowLogs
) -> None:
    allow_logs(r"refused to refresh the sign-in \(HTTP 400, invalid_grant\)")
    # The SDK's own line for it: the call goes through the manager, not a connection
    # (which would put it in the server's log).
    allow_logs(r"^Token refresh failed: 400$")
    spec = server_spec("revoked", oidc.resource)
    prompter = ScriptedPrompter()
    clock = Clock()
    manager = AuthManager(prompter, endpoint_policy=None, clock=clock)
    await manager.login(spec, browser=False)
    storage = manager.storage_for(spec)
    await revoke_refresh_token(oidc, manager, spec)
    clock.advance(ACCESS_TTL + 1)

    with pytest.raises(BaseException) as caught:
        await call_echo(manager, spec)
    assert has_needs_auth(caught.value)
    assert await storage.is_rejected()
    assert len(prompter.requests) == 1  # background work never asked anybody

    # The same rejected grant is not tried again: auth_for refuses at once.
    with pytest.raises(Exception) as again:
        await manager.auth_for(spec, interactive=False)
    assert "NeedsAuth" in type(again.value).__name__
    assert "portico mcp login revoked" in str(again.value)

    await manager.login(spec, browser=False)  # the person signs in again
    assert not await storage.is_rejected()
    assert await call_echo(manager, spec) == "echo: hi"
