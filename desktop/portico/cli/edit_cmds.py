"""``portico config set|unset, portico mcp remove|enable|disable|rename``."""

from __future__ import annotations

from portico.cli.commands import Groups


def register(groups: Groups) -> None:
    """Not built yet."""
