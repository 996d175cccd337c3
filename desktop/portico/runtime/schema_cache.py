"""On-disk cache of what a server offers, so lazy servers register without starting.

One JSON file per server under ``paths().schema_cache_dir``, keyed by the server name and
the digest of its config: a changed config never reads a stale entry. Written after
every live connect (and after a tools list_changed refresh).

A 2026 server's list results say how long they stay fresh (``ttlMs``) and whether they
may be shared (``cacheScope``). The entry records the shortest positive ttl of its lists
and the strictest scope; a lazy start does not trust an expired entry (the server is
started to list again). A ttl of 0 is what the SDK sends when a server states nothing,
so it promises nothing either way: such an entry is kept until the config or a
list_changed replaces it, as for handshake-era servers.

``cacheScope: "private"`` (2026-07-28, server/utilities/caching: reusable "for the same
authorization context", never "shared across authorization contexts"): the file outlives
a sign-in, a changed secret or another account, so a private entry carries the keyed
fingerprint of the credentials it was listed with (``runtime/cache_context.py``) and is
adopted only while they are the same. A private entry without one is never written
(saving it removes the server's entry) and never read.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from portico.config.model import ServerSpec
from portico.paths import paths

FORMAT = 1
_SAFE = re.compile(r"[^A-Za-z0-9_-]")


@dataclass
class CachedSchema:
    tools: list[Any] = field(default_factory=list)  # mcp_types.Tool
    prompts: list[Any] = field(default_factory=list)
    resources: list[Any] = field(default_factory=list)
    resource_templates: list[Any] = field(default_factory=list)
    server_info: Any = None  # mcp_types.Implementation | None
    protocol_version: str | None = None
    capabilities: Any = None  # mcp_types.ServerCapabilities | None
    written_at: float = 0.0
    ttl_ms: int | None = None  # how long the lists stay fresh, from written_at
    cache_scope: str | None = None  # "private" or "public", when the server said
    context: str | None = None  # private: the authorization context (cache_context.py)

    def expired(self, now: float | None = None) -> bool:
        if self.ttl_ms is None:
            return False
        return (time.time() if now is None else now) >= self.written_at + self.ttl_ms / 1000


def freshness(hints: list[tuple[int, str]]) -> tuple[int | None, str | None]:
    """The entry's (ttl_ms, cache_scope) from every list page's hint: the shortest
    positive ttl, and "private" if any page is private."""
    ttls = [ttl for ttl, _ in hints if ttl > 0]
    scopes = {scope for _, scope in hints}
    scope = ("private" if "private" in scopes else "public") if scopes else None
    return (min(ttls) if ttls else None), scope


def cache_file(spec: ServerSpec, root: Path | None = None) -> Path:
    base = root if root is not None else paths().schema_cache_dir
    return base / f"{_SAFE.sub('_', spec.name)}-{spec.digest()[:16]}.json"


def _dump(items: list[Any]) -> list[dict[str, Any]]:
    return [item.model_dump(mode="json", by_alias=True, exclude_none=True) for item in items]


def forget(spec: ServerSpec, root: Path | None = None) -> bool:
    """Remove every entry of ``spec``'s server (any digest); True if one was there."""
    base = root if root is not None else paths().schema_cache_dir
    target = cache_file(spec, root)
    prefix = f"{_SAFE.sub('_', spec.name)}-"
    removed = False
    for other in base.glob(f"{prefix}*.json"):
        if len(other.stem) == len(target.stem):
            other.unlink(missing_ok=True)
            removed = True
    return removed


def save(spec: ServerSpec, schema: CachedSchema, root: Path | None = None) -> Path | None:
    """Write the entry atomically; old entries of the same server are removed.

    A private entry without its authorization context is not written (None), and the
    server's old entries are removed."""
    if schema.cache_scope == "private" and not schema.context:
        forget(spec, root)
        return None
    target = cache_file(spec, root)
    target.parent.mkdir(parents=True, exist_ok=True)
    data = {
        "format": FORMAT,
        "server": spec.name,
        "digest": spec.digest(),
        "written_at": time.time(),
        "ttl_ms": schema.ttl_ms,
        "cache_scope": schema.cache_scope,
        "context": schema.context if schema.cache_scope == "private" else None,
        "protocol_version": schema.protocol_version,
        "server_info": schema.server_info.model_dump(mode="json", by_alias=True)
        if schema.server_info is not None
        else None,
        "capabilities": schema.capabilities.model_dump(
            mode="json", by_alias=True, exclude_none=True
        )
        if schema.capabilities is not None
        else None,
        "tools": _dump(schema.tools),
        "prompts": _dump(schema.prompts),
        "resources": _dump(schema.resources),
        "resource_templates": _dump(schema.resource_templates),
    }
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-", suffix=".json")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    prefix = f"{_SAFE.sub('_', spec.name)}-"
    for other in target.parent.glob(f"{prefix}*.json"):
        if other != target and len(other.stem) == len(target.stem):
            other.unlink(missing_ok=True)
    return target


def load(spec: ServerSpec, root: Path | None = None) -> CachedSchema | None:
    """The cached entry for exactly this config, or None (absent, stale or unreadable)."""
    import mcp_types as types

    path = cache_file(spec, root)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("format") != FORMAT or data.get("digest") != spec.digest():
            return None
        context = data.get("context")
        if data.get("cache_scope") == "private" and not (context and isinstance(context, str)):
            return None  # private lists are bound to a context (see the module docstring)
        return CachedSchema(
            tools=[types.Tool.model_validate(t) for t in data.get("tools", [])],
            prompts=[types.Prompt.model_validate(p) for p in data.get("prompts", [])],
            resources=[types.Resource.model_validate(r) for r in data.get("resources", [])],
            resource_templates=[
                types.ResourceTemplate.model_validate(r) for r in data.get("resource_templates", [])
            ],
            server_info=types.Implementation.model_validate(data["server_info"])
            if data.get("server_info")
            else None,
            protocol_version=data.get("protocol_version"),
            capabilities=types.ServerCapabilities.model_validate(data["capabilities"])
            if data.get("capabilities")
            else None,
            written_at=float(data.get("written_at", 0.0)),
            ttl_ms=_ttl(data.get("ttl_ms")),
            cache_scope=data.get("cache_scope")
            if data.get("cache_scope") in ("private", "public")
            else None,
            context=context if isinstance(context, str) else None,
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _ttl(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return None
