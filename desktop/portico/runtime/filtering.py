"""``tools.include`` / ``tools.exclude`` and the ``tool_costs`` key check.

Entries are exact names or case-sensitive fnmatch globs (``*``, ``?``, ``[...]``); an
entry without a metacharacter matches only that exact name. When ``include`` is given it
decides alone (include wins over exclude). Filtered-out tools keep their reason so the
GUI can show why a tool is missing.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase

from portico.config.model import ToolFilter

from .naming import SEPARATOR

_META = frozenset("*?[")


def is_pattern(entry: str) -> bool:
    return any(c in _META for c in entry)


def matches(name: str, entry: str) -> bool:
    if is_pattern(entry):
        return fnmatchcase(name, entry)
    return name == entry


def first_match(name: str, entries: Sequence[str]) -> str | None:
    for entry in entries:
        if matches(name, entry):
            return entry
    return None


@dataclass(frozen=True)
class FilterDecision:
    tool: str
    included: bool
    reason: str | None = None  # why a tool is filtered out (None when included)


def decide(tool: str, rules: ToolFilter) -> FilterDecision:
    if rules.include:
        hit = first_match(tool, rules.include)
        if hit is None:
            return FilterDecision(tool, False, "not matched by tools.include")
        return FilterDecision(tool, True)
    if rules.exclude:
        hit = first_match(tool, rules.exclude)
        if hit is not None:
            how = "pattern" if is_pattern(hit) else "entry"
            return FilterDecision(tool, False, f"excluded by tools.exclude {how} {hit!r}")
    return FilterDecision(tool, True)


def apply_filter(tools: Iterable[str], rules: ToolFilter) -> list[FilterDecision]:
    return [decide(t, rules) for t in tools]


def filter_warnings(server: str, tools: Sequence[str], rules: ToolFilter) -> list[str]:
    """Entries that match nothing the server offers (likely typos), and include+exclude."""
    out: list[str] = []
    if rules.include and rules.exclude:
        out.append(
            f"server {server!r}: both tools.include and tools.exclude are set; "
            "tools.include wins and tools.exclude is ignored"
        )
    for key, entries in (("include", rules.include), ("exclude", rules.exclude)):
        for entry in entries:
            if any(matches(t, entry) for t in tools):
                continue
            out.append(
                f"server {server!r}: tools.{key} entry {entry!r} matches no tool"
                + _suggest(entry, tools)
            )
    return out


def cost_key_warnings(server: str, keys: Iterable[str], tools: Sequence[str]) -> list[str]:
    """Warnings for ``tool_costs`` keys the server does not offer (checked at connect)."""
    offered = set(tools)
    prefix = f"{server}{SEPARATOR}"
    out: list[str] = []
    for key in keys:
        if key.startswith(prefix):
            bare = key[len(prefix) :]
            hint = "" if bare in offered else f" (and {server!r} offers no tool {bare!r})"
            out.append(
                f"server {server!r}: tool_costs key {key!r} is written with the server "
                f"prefix; write {bare!r} instead{hint}"
            )
        elif key not in offered:
            out.append(
                f"server {server!r}: tool_costs key {key!r} is not a tool this server "
                f"offers" + _suggest(key, tools)
            )
    return out


def _suggest(word: str, tools: Sequence[str]) -> str:
    close = difflib.get_close_matches(word, list(tools), n=1)
    return f"; did you mean {close[0]!r}?" if close else ""
