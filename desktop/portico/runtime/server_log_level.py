"""The least severe log notification a server is asked for, and how it is asked.

Handshake-era (2025-11-25) servers that declare the ``logging`` capability are sent
``logging/setLevel`` after connecting and whenever the level changes (the Log tab's level
control). 2026-07-28 sessions opt in per request instead: the SDK's client stamps the
level it was built with into every request's ``_meta``, so a level chosen later rides on
each tool call's ``_meta`` until the next connect builds the client with it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from portico.runtime.errors import describe

if TYPE_CHECKING:
    from mcp import Client

# MCP log levels (RFC 5424 order, least severe first).
LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
DEFAULT = "info"


def checked(level: str) -> str:
    if level not in LEVELS:
        raise ValueError(f"unknown log level {level!r}; one of: {', '.join(LEVELS)}")
    return level


def _modern(protocol_version: str | None) -> bool:
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    return protocol_version in MODERN_PROTOCOL_VERSIONS


def call_meta(level: str, opened_with: str, protocol_version: str | None) -> Any:
    """The ``_meta`` a 2026 request carries when the level changed after the client was
    built (None otherwise: the SDK's own stamp says it)."""
    if level == opened_with or not _modern(protocol_version):
        return None
    from mcp_types import LOG_LEVEL_META_KEY

    return {LOG_LEVEL_META_KEY: level}


async def ask(
    client: Client,
    level: str,
    capabilities: Any,
    protocol_version: str | None,
    note: Callable[[str], None],
    *,
    changed: bool = False,
) -> None:
    """Ask a live session for ``level`` and above (``changed``: the person chose it now,
    so the log says what happened)."""
    from mcp import MCPError

    from portico.runtime.list_refresher import handshake_era

    if capabilities is None or capabilities.logging is None:
        if changed:
            note(f"the server offers no logging: its log level stays as it is ({level} asked)")
        return
    if _modern(protocol_version):
        if changed:
            note(f"asking for server log messages at {level} and above with each request")
        return
    try:
        with handshake_era():
            await client.set_logging_level(level)  # type: ignore[arg-type]
    except MCPError as exc:
        note(f"the server refused logging/setLevel: {describe(exc)}")
        return
    if changed:
        note(f"asked the server for log messages at {level} and above (logging/setLevel)")
