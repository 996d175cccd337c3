"""How soon a dropped ``subscriptions/listen`` stream is opened again, and when a
2025-11-25 session's event stream was opened again.

The 2026-07-28 listen stream has no replay: while it is down, list changes and resource
updates are lost, so once it is back the lists are fetched again and every subscribed
resource counts as updated. A server that restarts is back in seconds, so the first try
comes soon; each failure in a row doubles the wait up to a cap, and a stream that was
acknowledged starts the doubling again.

A 2025-11-25 Streamable HTTP session hears list changes on its GET event stream, which
the SDK opens again by itself after a drop; what the server sent meanwhile is lost unless
the stream resumes (``Last-Event-ID``), so :class:`EventStreamWatch` tells the connection
when to fetch the lists again.
"""

from __future__ import annotations

from typing import Any

RELISTEN_FIRST = 0.5
RELISTEN_MAX = 30.0


class Backoff:
    """Waits between listen attempts: ``first``, doubling up to ``cap``."""

    def __init__(self, first: float = RELISTEN_FIRST, cap: float = RELISTEN_MAX) -> None:
        self.first = first
        self.cap = cap
        self._next = first

    def next(self) -> float:
        delay = self._next
        self._next = min(self._next * 2, self.cap)
        return delay

    def reset(self) -> None:
        self._next = self.first


class EventStreamWatch:
    """Counts one session's GET event streams, as their responses arrive."""

    def __init__(self) -> None:
        self.opened = 0

    def reopened(self, response: Any) -> bool:
        """True for an event stream opened again without resuming (events missed)."""
        request = response.request
        if request.method != "GET" or response.status_code != 200:
            return False
        if not response.headers.get("content-type", "").startswith("text/event-stream"):
            return False
        if not request.headers.get("mcp-session-id"):
            return False
        self.opened += 1
        return self.opened > 1 and not request.headers.get("last-event-id")


def refused(exc: BaseException) -> bool:
    """The server refused the listen request itself (unknown method, bad filter):
    asking again cannot help."""
    from mcp import MCPError

    code = exc.error.code if isinstance(exc, MCPError) and exc.error is not None else None
    return code in (-32601, -32602)
