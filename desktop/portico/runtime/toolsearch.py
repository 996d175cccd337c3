"""Tool search: BM25 over tool names, descriptions and parameter names, and the
conversation's active set of loaded tools.

When the registry holds more tools than ``defer_tools`` (0 = always defer), the tools of
servers without ``always_load`` are hidden behind one small ``tool_search`` tool. A search
loads its matches into the conversation's :class:`ActiveSet`, where they stay; the set is
saved with the conversation (``to_json`` / ``from_json``) so a resumed chat gets them back.
"""

from __future__ import annotations

import heapq
import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

TOOL_SEARCH = "tool_search"
DEFAULT_LIMIT = 5
MAX_LISTED = 200  # deferred names shown in the tool_search description

_SPLIT = re.compile(r"[^A-Za-z0-9]+")
_PROSE = re.compile(r"[a-z0-9]+")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


_WORD_CACHE: dict[str, tuple[str, ...]] = {}
_WORD_CACHE_MAX = 200_000


def _word_tokens(chunk: str) -> tuple[str, ...]:
    cached = _WORD_CACHE.get(chunk)
    if cached is None:
        parts = _CAMEL.findall(chunk)
        lowered = chunk.lower()
        cached = (lowered, *(p.lower() for p in parts)) if len(parts) > 1 else (lowered,)
        if len(_WORD_CACHE) < _WORD_CACHE_MAX:
            _WORD_CACHE[chunk] = cached
    return cached


def tokenize(text: str) -> list[str]:
    """Lower-cased words; snake_case, kebab-case and camelCase parts count as words too."""
    out: list[str] = []
    for chunk in _SPLIT.split(text):
        if chunk:
            out.extend(_word_tokens(chunk))
    return out


@dataclass(frozen=True)
class SearchDoc:
    name: str  # qualified name
    description: str
    params: tuple[str, ...]


class ToolIndex:
    """An inverted index with BM25 scoring (k1=1.2, b=0.75); the name counts twice.

    Each posting holds its precomputed BM25 weight, so a query only adds numbers.
    """

    K1 = 1.2
    B = 0.75

    def __init__(self, docs: Iterable[SearchDoc]) -> None:
        self._names: list[str] = []
        lengths: list[int] = []
        raw: dict[str, list[tuple[int, int]]] = {}
        for i, doc in enumerate(docs):
            # Names and parameter names get the full split (snake, kebab, camel); prose
            # is split on non-alphanumerics only, in one C call (build time matters at
            # thousands of tools).
            tokens = tokenize(doc.name) * 2
            tokens += _PROSE.findall(doc.description.lower())
            for p in doc.params:
                tokens += tokenize(p)
            self._names.append(doc.name)
            lengths.append(len(tokens))
            for term, tf in Counter(tokens).items():
                postings = raw.get(term)
                if postings is None:
                    raw[term] = [(i, tf)]
                else:
                    postings.append((i, tf))
        n = len(self._names)
        avg = (sum(lengths) / n) if n else 1.0
        k1, b = self.K1, self.B
        norms = [k1 * (1 - b + b * length / avg) for length in lengths]
        self._postings: dict[str, list[tuple[int, float]]] = {}
        for term, postings in raw.items():
            df = len(postings)
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5)) * (k1 + 1)
            self._postings[term] = [(d, idf * tf / (tf + norms[d])) for d, tf in postings]

    def __len__(self) -> int:
        return len(self._names)

    def search(self, query: str, limit: int = DEFAULT_LIMIT) -> list[tuple[str, float]]:
        scores: dict[int, float] = {}
        get = scores.get
        for term in set(tokenize(query)):
            for doc, weight in self._postings.get(term, ()):
                scores[doc] = get(doc, 0.0) + weight
        best = heapq.nsmallest(max(0, limit), scores.items(), key=lambda kv: (-kv[1], kv[0]))
        return [(self._names[i], s) for i, s in best]


class ActiveSet:
    """Deferred tools a conversation has loaded through tool_search; they stay loaded."""

    def __init__(self, names: Iterable[str] = ()) -> None:
        self._names: list[str] = []
        self._seen: set[str] = set()
        self.add(names)

    def add(self, names: Iterable[str]) -> list[str]:
        added = []
        for name in names:
            if name not in self._seen:
                self._seen.add(name)
                self._names.append(name)
                added.append(name)
        return added

    def __contains__(self, name: object) -> bool:
        return name in self._seen

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def to_json(self) -> list[str]:
        return list(self._names)

    @classmethod
    def from_json(cls, data: Sequence[str] | None) -> ActiveSet:
        return cls(str(n) for n in (data or ()))


def should_defer(total_tools: int, defer_tools: int) -> bool:
    return defer_tools == 0 or total_tools > defer_tools


def tool_search_schema() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "description": "Words describing the tool you need (name, purpose, parameters).",
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": 20,
                "description": f"How many tools to load (default {DEFAULT_LIMIT}).",
            },
        },
        "required": ["query"],
    }


def tool_search_description(deferred: Sequence[str]) -> str:
    shown = list(deferred[:MAX_LISTED])
    more = len(deferred) - len(shown)
    listing = ", ".join(shown)
    if more > 0:
        listing += f", and {more} more"
    return (
        "Search the tools that are not loaded yet and load the best matches so you can "
        f"call them. Deferred tools: {listing}."
    )
