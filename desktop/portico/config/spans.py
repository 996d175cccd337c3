"""Where each server's lines are in a config file, proven by a cheap parse of the whole file.

An edit of one server needs the round-trip tree of that server's lines only; a round-trip
parse of a whole big file is what makes an edit slow. ``toml_spans`` and ``yaml_spans``
read the whole file with a fast parser (``tomllib``; libyaml through PyYAML), which
proves the file is well formed, and find the lines of each server. They answer None for
any shape whose server lines cannot be edited apart from the rest of the file; the
editor then parses the whole file as before.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Layout:
    """The servers of one file and the lines that hold each of them."""

    names: tuple[str, ...]
    """Every server the file defines, in file order."""
    spans: Mapping[str, tuple[int, int]]
    """(first line, end line) of the servers whose lines are theirs alone (0-based lines,
    end exclusive; the lines from a server's key or header up to the next server's)."""
    tail: str | None
    """The server whose lines end where the servers end: a new server goes after it."""
    separated: bool = False
    """YAML: whether a blank line separates any two servers (new ones get one too)."""
    column: int = 0
    """YAML: the column of the servers' keys."""
    data: Mapping[str, Any] = field(default_factory=dict)
    """TOML: the whole file as plain data (to check what a span's own parse reads)."""
