"""Refresh after expiry, a revoked grant parking the server, and re-login."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator

import httpx2
import pytest
from protected import ProtectedState

from portico.auth.manager import AuthManager
from tests.auth.conftest import Oidc, ScriptedPrompter, make_oidc, serve_protected, server_spec
from tests.auth.test_login import _has_needs_auth, call_echo
from tests.helpers.logs import AllowLogs

ACCESS_TTL = 2


@pytest.fixture(scope="module")
def oidc() -> Iterator[Oidc]:
    yield from make_oidc(accessTtl=ACCESS_TTL)


@pytest.fixture
async def protected(oidc: Oidc) -> AsyncIterator[ProtectedState]:
    async with serve_protected(oidc) as state:
        yield state


async def test_refresh_after_expiry_in_a_new_process(oidc: Oidc, protected: ProtectedState) -> None:
    spec = server_spec("short", oidc.resource)
    await AuthManager(ScriptedPrompter(), endpoint_policy=None).login(spec, browser=False)
    manager = AuthManager(
        ScriptedPrompter(mode="cancel"), endpoint_policy=None
    )  # a later process, nobody there
    before = await manager.storage_for(spec).raw_tokens()
    assert before is not None
    await asyncio.sleep(ACCESS_TTL + 1)

    assert await call_echo(manager, spec) == "echo: hi"
    after = await manager.storage_for(spec).raw_tokens()
    assert after is not None and after.access_token != before.access_token
    assert after.refresh_token  # kept (or rotated) for the next time


async def test_revoked_grant_parks_until_new_login(
    oidc: Oidc, protected: ProtectedState, allow_logs: AllowLogs
) -> None:
    allow_logs(r"refused to refresh the sign-in \(HTTP 400, invalid_grant\)")
    spec = server_spec("revoked", oidc.resource)
    prompter = ScriptedPrompter()
    manager = AuthManager(prompter, endpoint_policy=None)
    await manager.login(spec, browser=False)
    storage = manager.storage_for(spec)
    tokens = await storage.raw_tokens()
    client = await storage.get_client_info()
    assert tokens is not None and tokens.refresh_token and client is not None
    async with httpx2.AsyncClient() as http:
        revoked = await http.post(
            f"{oidc.issuer}/token/revocation",
            data={"token": tokens.refresh_token, "client_id": client.client_id},
        )
        assert revoked.status_code == 200
    await asyncio.sleep(ACCESS_TTL + 1)

    with pytest.raises(BaseException) as caught:
        await call_echo(manager, spec)
    assert _has_needs_auth(caught.value)
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
