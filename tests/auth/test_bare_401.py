"""Issue 26, item 6: a server that answers 401 without a WWW-Authenticate challenge but
publishes RFC 9728 protected-resource metadata at the well-known address is a sign-in,
not a failure: the connection parks in NeedsAuth (sign-in offered, AuthRequired
published) instead of looping Failed / Cooldown, and signing in by discovery (the config
has no ``oauth``) then connects. Real oidc-provider, real protected MCP server."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest
from protected import ProtectedState

from portico.auth.manager import AuthManager
from portico.runtime.connection import Connection
from portico.runtime.events import AuthRequired, EventBus, Status
from portico.runtime.hooks import ConnectionHooks
from tests.helpers.oauth import Oidc, ScriptedPrompter, server_spec

pytestmark = pytest.mark.slow  # talks to real servers or processes


async def test_a_bare_401_with_metadata_offers_sign_in(
    oidc: Oidc, protected: ProtectedState
) -> None:
    protected.challenge = False
    prompter = ScriptedPrompter(mode="browser")
    manager = AuthManager(prompter, endpoint_policy=None)
    spec = dataclasses.replace(server_spec("bare", oidc.resource), oauth=None)
    bus = EventBus()
    asked: list[AuthRequired] = []
    bus.subscribe(lambda event: asked.append(event) if isinstance(event, AuthRequired) else None)
    connection = Connection(
        spec, bus=bus, hooks=ConnectionHooks(auth_for=manager.auth_for), cooldown_base=60.0
    )
    await connection.start()
    try:
        state = await connection.wait_settled(30)
        assert state.status is Status.NEEDS_AUTH, state.error
        error = state.error or ""
        assert "without a challenge" in error and "portico mcp login bare" in error
        assert oidc.issuer in error  # the authorization server the metadata names
        assert asked and prompter.requests == []  # offered, nobody asked yet

        await manager.login(spec, browser=False)  # Sign in: discovery finds the metadata
        await connection.retry_now()
        for _ in range(300):
            if connection.state.status is Status.RUNNING:
                break
            await asyncio.sleep(0.05)
        assert connection.state.status is Status.RUNNING, connection.state.error
        result = await connection.call_tool("echo", {"text": "signed in"})
        assert result.content[0].text == "echo: signed in"
    finally:
        await connection.stop()
