"""List caching: the ttlMs / cacheScope of a 2026 server's list results are recorded with
the schema cache entry, a lazy start does not trust an expired entry, and private lists
never reach the on-disk cache."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from portico.config.model import Protocol, ServerSpec
from portico.runtime import schema_cache
from portico.runtime.connection import Connection
from portico.runtime.events import EventBus, Status
from portico.runtime.hooks import ConnectionHooks
from tests.helpers.keyrings import memory_keyring
from tests.helpers.specs import make_spec

pytestmark = pytest.mark.slow  # talks to real servers or processes

__all__ = ["memory_keyring"]

FRESH = Path(__file__).resolve().parents[1] / "servers" / "fresh.py"


def _spec(name: str, *args: str, protocol: Protocol = Protocol.AUTO) -> ServerSpec:
    return make_spec(
        name,
        "stdio",
        command=sys.executable,
        args=(str(FRESH), *args),
        lazy=True,
        protocol=protocol,
        connect_timeout=60.0,
    )


async def _first_start(spec: ServerSpec, bus: EventBus) -> None:
    conn = Connection(spec, bus=bus)
    await conn.start()
    try:
        assert (await conn.wait_settled(60)).status is Status.RUNNING  # no cache yet
    finally:
        await conn.stop()


async def test_a_fresh_entry_registers_lazily_and_records_its_ttl(bus: EventBus) -> None:
    spec = _spec("longlived", "--ttl-ms", "600000", "--scope", "public")
    await _first_start(spec, bus)
    cached = schema_cache.load(spec)
    assert cached is not None
    assert (cached.ttl_ms, cached.cache_scope) == (600000, "public")
    assert not cached.expired()
    assert cached.expired(cached.written_at + 600.0)

    conn = Connection(spec, bus=bus)
    await conn.start()
    try:
        assert (await conn.wait_settled(10)).status is Status.LAZY
        assert conn.from_cache and conn.pid is None
    finally:
        await conn.stop()


async def test_an_expired_entry_starts_the_server_to_list_again(bus: EventBus) -> None:
    spec = _spec("shortlived", "--ttl-ms", "300", "--scope", "public")
    await _first_start(spec, bus)
    cached = schema_cache.load(spec)
    assert cached is not None and (cached.ttl_ms, cached.cache_scope) == (300, "public")
    assert cached.ttl_ms is not None
    await asyncio.sleep(max(0.0, cached.written_at + cached.ttl_ms / 1000 - time.time()) + 0.05)
    assert cached.expired()

    conn = Connection(spec, bus=bus)
    await conn.start()
    try:
        assert (await conn.wait_settled(60)).status is Status.RUNNING
        assert not conn.from_cache and conn.pid is not None
        assert any("older than the 0.3 s" in line for line in conn.log.tail(50))
    finally:
        await conn.stop()
    again = schema_cache.load(spec)
    assert again is not None and again.written_at > cached.written_at  # listed again


async def test_a_handshake_era_entry_has_no_ttl_and_stays_trusted(bus: EventBus) -> None:
    spec = _spec("oldfresh", "--ttl-ms", "300", protocol=Protocol.LEGACY)
    await _first_start(spec, bus)
    cached = schema_cache.load(spec)
    assert cached is not None and cached.ttl_ms is None and not cached.expired()


def _private(name: str) -> ServerSpec:
    return replace(
        _spec(name, "--ttl-ms", "600000", "--scope", "private"),
        env=(("FRESH_TOKEN", "${env:FRESH_TOKEN}"),),
    )


async def test_a_private_entry_is_reused_only_with_the_same_credentials(
    bus: EventBus,
) -> None:
    """cacheScope private: the entry is bound to the credentials it was listed with (here
    an API key from the environment); another key starts the server to list again."""
    spec = _private("privatelists")
    first = ConnectionHooks(environ={"FRESH_TOKEN": "key-of-alice-0123456789"})
    conn = Connection(spec, bus=bus, hooks=first)
    await conn.start()
    try:
        assert (await conn.wait_settled(60)).status is Status.RUNNING
    finally:
        await conn.stop()
    cached = schema_cache.load(spec)
    assert cached is not None and cached.cache_scope == "private" and cached.context
    text = schema_cache.cache_file(spec).read_text(encoding="utf-8")
    assert "key-of-alice" not in text  # a keyed hash, never the value

    same = Connection(spec, bus=bus, hooks=first)
    await same.start()
    try:
        assert (await same.wait_settled(10)).status is Status.LAZY
        assert same.from_cache and [t.name for t in same.tools] == ["echo"]
    finally:
        await same.stop()

    other = ConnectionHooks(environ={"FRESH_TOKEN": "key-of-bob-9876543210"})
    conn = Connection(spec, bus=bus, hooks=other)
    await conn.start()
    try:
        assert (await conn.wait_settled(60)).status is Status.RUNNING
        assert not conn.from_cache and conn.pid is not None
        assert any("private to other credentials" in line for line in conn.log.tail(50))
    finally:
        await conn.stop()
    again = schema_cache.load(spec)
    assert again is not None and again.context not in (None, cached.context)


def test_the_context_key_is_private_to_the_user(portico_home: Path) -> None:
    from portico.runtime import cache_context

    cache_context._key(portico_home / "state")
    key = portico_home / "state" / cache_context.KEY_FILE
    assert key.stat().st_mode & 0o777 == 0o600
    assert cache_context._key(portico_home / "state") == key.read_bytes()  # kept, not remade


async def test_a_sign_in_change_is_another_authorization_context(
    portico_home: Path, memory_keyring: object
) -> None:
    """For an OAuth server the stored sign-in is part of the context: a new login (another
    account, or a refreshed token) never reads the old private lists."""
    from mcp.shared.auth import OAuthToken

    from portico.auth.manager import AuthManager
    from portico.config.model import OAuthSpec
    from portico.policy.prompters import NonInteractivePrompter
    from portico.runtime.cache_context import authorization_context

    spec = make_spec("signed", "http", url="https://mcp.example.com/mcp", oauth=OAuthSpec())
    auth = AuthManager(NonInteractivePrompter())
    hooks = auth.hooks()
    storage = auth.storage_for(spec)
    signed_out = await authorization_context(spec, hooks)
    await storage.set_tokens(OAuthToken(access_token="at-alice-0123456789"))
    alice = await authorization_context(spec, hooks)
    assert alice == await authorization_context(spec, hooks)  # stable while unchanged
    await storage.set_tokens(OAuthToken(access_token="at-bob-0123456789"))
    bob = await authorization_context(spec, hooks)
    assert len({signed_out, alice, bob}) == 3


def test_a_private_entry_without_its_context_is_never_read() -> None:
    """A private entry that names no credentials (an older file, or copied in) is a miss,
    and one is never written."""
    spec = _spec("oldprivate")
    assert schema_cache.save(spec, schema_cache.CachedSchema(cache_scope="private")) is None
    written = schema_cache.save(spec, schema_cache.CachedSchema(cache_scope="public"))
    assert written is not None and schema_cache.load(spec) is not None
    data = json.loads(written.read_text(encoding="utf-8"))
    data["cache_scope"] = "private"
    written.write_text(json.dumps(data), encoding="utf-8")
    assert schema_cache.load(spec) is None
