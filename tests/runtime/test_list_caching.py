"""List caching: the ttlMs / cacheScope of a 2026 server's list results are recorded with
the schema cache entry, and a lazy start does not trust an expired entry."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

import pytest

from portico.config.model import Protocol, ServerSpec
from portico.runtime import schema_cache
from portico.runtime.connection import Connection
from portico.runtime.events import EventBus, Status
from tests.helpers.specs import make_spec

pytestmark = pytest.mark.slow  # talks to real servers or processes

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
    spec = _spec("shortlived", "--ttl-ms", "300")
    await _first_start(spec, bus)
    cached = schema_cache.load(spec)
    assert cached is not None and (cached.ttl_ms, cached.cache_scope) == (300, "private")
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
