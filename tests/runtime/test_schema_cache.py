"""The on-disk schema cache: round trip, keyed by config digest, atomic and tolerant."""

from __future__ import annotations

from pathlib import Path

import mcp_types as types
import pytest

from portico.runtime import schema_cache

from .conftest import toolbox_spec

pytestmark = pytest.mark.slow  # talks to real servers or processes


def sample() -> schema_cache.CachedSchema:
    return schema_cache.CachedSchema(
        tools=[
            types.Tool(
                name="echo",
                description="Echo",
                input_schema={"type": "object", "properties": {"text": {"type": "string"}}},
                annotations=types.ToolAnnotations(read_only_hint=True),
            )
        ],
        prompts=[types.Prompt(name="greet", description="hi")],
        resources=[types.Resource(name="readme", uri="toolbox://readme")],
        server_info=types.Implementation(name="toolbox", version="1"),
        protocol_version="2025-11-25",
        capabilities=types.ServerCapabilities(tools=types.ToolsCapability(list_changed=True)),
    )


def test_round_trip(portico_home: Path) -> None:
    spec = toolbox_spec("cached")
    path = schema_cache.save(spec, sample())
    assert path.is_relative_to(portico_home / "cache")
    loaded = schema_cache.load(spec)
    assert loaded is not None
    assert loaded.tools[0].name == "echo"
    assert loaded.tools[0].annotations.read_only_hint is True
    assert loaded.tools[0].input_schema["properties"]["text"]["type"] == "string"
    assert loaded.prompts[0].name == "greet"
    assert str(loaded.resources[0].uri) == "toolbox://readme"
    assert loaded.server_info.name == "toolbox"
    assert loaded.capabilities.tools.list_changed is True
    assert loaded.protocol_version == "2025-11-25"


def test_changed_config_misses_and_old_entry_is_replaced() -> None:
    old = toolbox_spec("srv")
    new = toolbox_spec("srv", timeout=99.0)
    first = schema_cache.save(old, sample())
    assert schema_cache.load(new) is None
    second = schema_cache.save(new, sample())
    assert second != first and not first.exists()
    assert schema_cache.load(new) is not None


def test_corrupt_entry_is_a_miss() -> None:
    spec = toolbox_spec("broken")
    path = schema_cache.save(spec, sample())
    path.write_text("{ not json")
    assert schema_cache.load(spec) is None


def test_other_servers_entries_survive() -> None:
    a, ab = toolbox_spec("a"), toolbox_spec("a-b")
    pa = schema_cache.save(a, sample())
    pab = schema_cache.save(ab, sample())
    schema_cache.save(toolbox_spec("a", timeout=5.0), sample())
    assert not pa.exists()
    assert pab.exists()


async def test_probe_keeps_a_lazy_servers_cache_entry() -> None:
    """Probing flips lazy off (another digest): it must not replace the real entry."""
    from portico.runtime.probe import probe

    spec = toolbox_spec("lazybox", lazy=True)
    entry = schema_cache.save(spec, sample())
    result = await probe(spec)
    assert result.ok, result.error
    assert entry.exists()
    loaded = schema_cache.load(spec)
    assert loaded is not None and loaded.tools[0].name == "echo"
    assert sorted(p.name for p in entry.parent.glob("lazybox-*.json")) == [entry.name]
