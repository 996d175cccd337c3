"""A count of full parses of config text, by file: the edit path's budget is one per file.

Every full parse (the loader's and the round-trip editor's, TOML and YAML) calls
:func:`counted`; the benchmark and the tests read :data:`PARSES`.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

PARSES: Counter[str] = Counter()


def counted(path: Path | str) -> None:
    PARSES[str(path)] += 1


def reset() -> None:
    PARSES.clear()


def total() -> int:
    return sum(PARSES.values())
