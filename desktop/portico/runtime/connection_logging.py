"""A connection's feature part: the server's own log (``notifications/message``).

It keeps the least severe level asked for across reconnects, asks a handshake-era server
for it (``logging/setLevel``), stamps it on 2026 requests, and writes what the server
sends into the server's log with its level.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from portico.runtime import server_log_level
from portico.runtime.serverlog import ServerLog

if TYPE_CHECKING:
    from mcp import Client

SERVER_LOG_LEVEL: Final = server_log_level.DEFAULT  # until the Log tab chooses another


class ServerLogging:
    def __init__(self, log: ServerLog, note: Callable[[str], None]) -> None:
        self._log = log
        self._note = note
        # The least severe server log notification asked for (kept across reconnects),
        # and the level the live client was built with (2026 sessions stamp it).
        self.level: str = SERVER_LOG_LEVEL
        self.opened: str = SERVER_LOG_LEVEL

    def opening(self) -> str:
        """A client is built now: the level it is built with."""
        self.opened = self.level
        return self.level

    async def ask(self, client: Client, capabilities: Any, protocol_version: str | None) -> None:
        """Handshake-era servers that offer logging send it after ``logging/setLevel``
        (2026 sessions opt in per request instead, through ``log_level``)."""
        await server_log_level.ask(client, self.level, capabilities, protocol_version, self._note)

    async def set_level(
        self, level: str, live: Client | None, capabilities: Any, protocol_version: str | None
    ) -> None:
        """The least severe level to ask for, now (``live``: the running session's client)
        and after every reconnect; ValueError for an unknown level."""
        self.level = server_log_level.checked(level)
        if live is not None:
            await server_log_level.ask(
                live, level, capabilities, protocol_version, self._note, changed=True
            )

    def call_meta(self, protocol_version: str | None) -> Any:
        """The ``_meta`` of a tool call (a 2026 session's level, when it changed)."""
        return server_log_level.call_meta(self.level, self.opened, protocol_version)

    async def heard(self, params: Any) -> None:
        """``notifications/message``: the server's own log, into its log with its level."""
        data = params.data
        text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, default=str)
        if params.logger:
            text = f"{params.logger}: {text}"
        for line in text.splitlines() or [""]:
            self._log.add(line[:4000], "mcp", level=str(params.level))
