"""Model-facing tool names: ``<server>__<tool>`` reduced to ``[A-Za-z0-9_-]``, <= 64 chars.

A name that had to be changed (a character replaced, or cut to 64) gets a stable hash
suffix computed from the original server and tool names, so two different tools never
end up with one name. The registry keeps the mapping back to the exact original names
(:class:`NameMap`); nothing ever parses a qualified name to find the tool.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass

MAX_NAME = 64
SEPARATOR = "__"
TOOLSET_PREFIX = "mcp-"
_HASH_LEN = 8
_INVALID = re.compile(r"[^A-Za-z0-9_-]")


def _suffix(server: str, tool: str) -> str:
    digest = hashlib.sha256(f"{server}\x00{tool}".encode()).hexdigest()
    return digest[:_HASH_LEN]


def qualify(server: str, tool: str) -> str:
    """The model-facing name of ``tool`` on ``server``; deterministic and stable."""
    raw = f"{server}{SEPARATOR}{tool}"
    clean = _INVALID.sub("_", raw)
    if clean == raw and len(clean) <= MAX_NAME:
        return clean
    # Changed or too long: keep a readable head and make it unique with a hash.
    head = clean[: MAX_NAME - _HASH_LEN - 1]
    return f"{head}_{_suffix(server, tool)}"


def toolset_name(server: str) -> str:
    return f"{TOOLSET_PREFIX}{server}"


def is_valid_name(name: str) -> bool:
    return bool(name) and len(name) <= MAX_NAME and not _INVALID.search(name)


@dataclass(frozen=True)
class Origin:
    """Where a qualified name points: the exact server and tool names."""

    server: str
    tool: str


class NameMap:
    """Qualified name <-> (server, tool), exact both ways."""

    def __init__(self) -> None:
        self._forward: dict[tuple[str, str], str] = {}
        self._back: dict[str, Origin] = {}

    def add(self, server: str, tool: str) -> str:
        key = (server, tool)
        existing = self._forward.get(key)
        if existing is not None:
            return existing
        name = qualify(server, tool)
        if name in self._back:
            # Only possible when a plain name equals another tool's hashed name: extremely
            # unlikely, but never silently shadow a tool. Re-hash with a counter.
            n = 1
            while name in self._back:
                name = qualify(server, f"{tool}\x00{n}")
                n += 1
        self._forward[key] = name
        self._back[name] = Origin(server, tool)
        return name

    def add_all(self, server: str, tools: Iterable[str]) -> list[str]:
        return [self.add(server, t) for t in tools]

    def remove_server(self, server: str) -> None:
        for key in [k for k in self._forward if k[0] == server]:
            name = self._forward.pop(key)
            self._back.pop(name, None)

    def origin(self, qualified: str) -> Origin | None:
        return self._back.get(qualified)

    def name(self, server: str, tool: str) -> str | None:
        return self._forward.get((server, tool))

    def __contains__(self, qualified: object) -> bool:
        return qualified in self._back

    def __len__(self) -> int:
        return len(self._back)
