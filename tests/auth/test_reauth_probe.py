"""A server parked in NeedsAuth picks up a login made by another process on its own.

The grant is revoked while the connection runs (refresh token revoked at oidc-provider,
access token refused by the protected server), so the server parks in NeedsAuth. Its
timed self-probe reads only the token storage: until the stored tokens change, the
rejected token is never sent again. Then ``portico mcp login`` in a separate process
(same PORTICO_HOME, ``secrets.file_fallback``, no secure keyring) stores a new token and
the parked connection reaches Running with no retry_now call.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import keyring
import keyring.backends.fail
import pytest
from protected import ProtectedState

from portico.auth.manager import AuthManager
from portico.auth.secret_store import SecretStore
from portico.runtime.connection import Connection
from portico.runtime.events import AuthRequired, EventBus, Status, StatusChanged
from tests.helpers.logs import AllowLogs
from tests.helpers.oauth import (
    Oidc,
    ScriptedPrompter,
    cli_login,
    revoke_refresh_token,
    server_spec,
    write_config,
)

pytestmark = pytest.mark.slow  # talks to real servers or processes

PROBE = 0.3


async def _until(connection: Connection, status: Status, seconds: float) -> None:
    reached = asyncio.Event()

    def watch(event: object) -> None:
        if isinstance(event, StatusChanged) and event.state.status is status:
            reached.set()

    unsubscribe = connection.bus.subscribe(watch)
    try:
        if connection.state.status is not status:
            await asyncio.wait_for(reached.wait(), seconds)
    finally:
        unsubscribe()


async def test_parked_server_picks_up_a_login_from_another_process(
    oidc: Oidc, protected: ProtectedState, portico_home: Path, tmp_path: Path, allow_logs: AllowLogs
) -> None:
    # Like the CLI process: no secure keyring, tokens in 0600 files under PORTICO_HOME.
    allow_logs(r"refused to refresh the sign-in \(HTTP 400, invalid_grant\)")
    keyring.set_keyring(keyring.backends.fail.Keyring())
    write_config(portico_home, oidc.resource)  # server 'guarded', auth: oauth

    prompter = ScriptedPrompter()
    manager = AuthManager(prompter, store=SecretStore(file_fallback=True), endpoint_policy=None)
    spec = server_spec("guarded", oidc.resource)
    await manager.login(spec, browser=False)
    events: list[object] = []
    bus = EventBus()
    bus.subscribe(events.append)
    connection = Connection(
        spec, bus=bus, hooks=manager.hooks(), auth_probe_interval=PROBE, cooldown_base=0.2
    )
    await connection.start()
    try:
        state = await connection.wait_settled(30)
        assert state.status is Status.RUNNING, state.error

        tokens = await manager.storage_for(spec).raw_tokens()
        assert tokens is not None
        await revoke_refresh_token(oidc, manager, spec)
        protected.revoked.add(tokens.access_token)
        try:
            await connection.call_tool("echo", {"text": "hi"})
        except Exception as exc:
            assert "NeedsAuth" in type(exc).__name__, repr(exc)
        else:
            raise AssertionError("the call with a revoked grant succeeded")
        await _until(connection, Status.NEEDS_AUTH, 20)
        assert any(isinstance(e, AuthRequired) for e in events)

        # Parked: several probes pass, and none sends the rejected token (or anything).
        shown = protected.seen_tokens.count(tokens.access_token)
        requests = protected.accepted + protected.rejected
        await asyncio.sleep(PROBE * 6)
        assert connection.state.status is Status.NEEDS_AUTH
        assert protected.seen_tokens.count(tokens.access_token) == shown
        assert protected.accepted + protected.rejected == requests
        assert len(prompter.requests) == 1  # nobody was asked

        # Another process signs in; the parked connection notices by itself.
        code, out, err = await cli_login(portico_home, tmp_path)
        assert code == 0, err
        assert "Signed in to 'guarded'" in out
        await _until(connection, Status.RUNNING, 20)
        fresh = await manager.storage_for(spec).raw_tokens()
        assert fresh is not None and fresh.access_token != tokens.access_token
        result = await connection.call_tool("echo", {"text": "again"})
        assert result.content[0].text == "echo: again"
        assert protected.seen_tokens[-1] == fresh.access_token
        assert protected.seen_tokens.count(tokens.access_token) == shown
        assert len(prompter.requests) == 1
    finally:
        await connection.stop()


async def test_without_a_new_login_the_probe_never_reconnects(
    oidc: Oidc, protected: ProtectedState
) -> None:
    """No stored sign-in at all: NeedsAuth at once, and the probe leaves it there."""
    manager = AuthManager(ScriptedPrompter(mode="cancel"), endpoint_policy=None)
    spec = server_spec("never", oidc.resource)
    connection = Connection(spec, hooks=manager.hooks(), auth_probe_interval=PROBE)
    await connection.start()
    try:
        state = await connection.wait_settled(20)
        assert state.status is Status.NEEDS_AUTH, state.error
        before = protected.accepted + protected.rejected
        await asyncio.sleep(PROBE * 5)
        assert connection.state.status is Status.NEEDS_AUTH
        assert protected.accepted + protected.rejected == before
    finally:
        await connection.stop()
