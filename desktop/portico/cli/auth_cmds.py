"""``portico mcp login|auth|logout, portico secret set|get|delete``."""

from __future__ import annotations

from portico.cli.commands import Groups


def register(groups: Groups) -> None:
    """Not built yet."""
