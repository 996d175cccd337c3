"""``portico mcp list|test|tools|call``."""

from __future__ import annotations

from portico.cli.commands import Groups


def register(groups: Groups) -> None:
    """Not built yet."""
