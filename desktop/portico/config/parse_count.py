"""A count of parses of config text, by file: the edit path's budget is one per file.

Every full parse (the loader's, the round-trip editor's, and the fast whole-file check
that lets an edit parse only the edited server's lines, TOML and YAML) calls
:func:`counted`; a round-trip parse of one server's lines calls :func:`counted_span`.
The benchmark and the tests read :data:`PARSES` and :data:`SPANS`.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

PARSES: Counter[str] = Counter()
SPANS: Counter[str] = Counter()


def counted(path: Path | str) -> None:
    PARSES[str(path)] += 1


def counted_span(path: Path | str) -> None:
    SPANS[str(path)] += 1


def reset() -> None:
    PARSES.clear()
    SPANS.clear()


def total() -> int:
    return sum(PARSES.values())
