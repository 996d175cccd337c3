"""What other clients asked of the endpoint: one bounded ring, naming each client.

Each request (a tool call, a listing, a read) and each refused connection (no token, an
unknown one, a foreign Origin) is one :class:`ClientExchange`; the backend server's own
Activity log (``runtime/activity.py``) still records the messages Portico then sends.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

log = logging.getLogger(__name__)

RING = 1000
UNKNOWN = "(unknown)"  # the client of a request whose token was missing or not known


@dataclass(frozen=True, slots=True)
class ClientExchange:
    time: float
    client: str
    method: str  # "tools/call", "resources/read", "HTTP POST" (refused before MCP)
    target: str = ""  # the tool, resource or prompt
    outcome: str = "ok"  # ok | error: ... | denied | refused 401 ... | refused 403 ...
    duration: float | None = None


class ClientActivity:
    def __init__(self, limit: int = RING) -> None:
        self._entries: deque[ClientExchange] = deque(maxlen=limit)
        self.listeners: list[Callable[[ClientExchange], None]] = []

    def record(self, entry: ClientExchange) -> None:
        self._entries.append(entry)
        for listener in list(self.listeners):
            try:
                listener(entry)
            except Exception:
                log.exception("a client activity listener failed")

    def entries(self, client: str | None = None) -> list[ClientExchange]:
        return [e for e in self._entries if client is None or e.client == client]

    def refused(self, method: str, why: str, client: str = UNKNOWN) -> None:
        self.record(ClientExchange(time.time(), client, method, outcome=why))
