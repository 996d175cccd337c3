"""The tray's aggregate state and menu facts, as pure functions (no Qt here)."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable
from enum import StrEnum

from portico.runtime.events import ServerState, Status


class Aggregate(StrEnum):
    EMPTY = "empty"  # no servers configured (or all disabled / stopped)
    RUNNING = "running"  # everything that should run, runs
    CONNECTING = "connecting"  # something is still connecting
    FAILED = "failed"  # something failed (or waits to retry)
    ATTENTION = "attention"  # something needs the person: trust review or sign-in


NEEDS_PERSON = frozenset({Status.AWAITING_TRUST, Status.NEEDS_AUTH})
BROKEN = frozenset({Status.FAILED, Status.COOLDOWN})
BUSY = frozenset({Status.CONNECTING})
FINE = frozenset({Status.RUNNING, Status.LAZY})

# Most urgent first: what the icon shows when several apply.
_PRIORITY = (
    (NEEDS_PERSON, Aggregate.ATTENTION),
    (BROKEN, Aggregate.FAILED),
    (BUSY, Aggregate.CONNECTING),
    (FINE, Aggregate.RUNNING),
)


def aggregate(statuses: Iterable[Status | ServerState]) -> Aggregate:
    present = {s.status if isinstance(s, ServerState) else s for s in statuses}
    for group, result in _PRIORITY:
        if present & group:
            return result
    return Aggregate.EMPTY


STATUS_TEXT: dict[Status, str] = {
    Status.DISABLED: "Disabled",
    Status.AWAITING_TRUST: "Awaiting trust review",
    Status.REJECTED: "Rejected at trust review",
    Status.CONNECTING: "Connecting",
    Status.RUNNING: "Running",
    Status.LAZY: "Starts on first use",
    Status.NEEDS_AUTH: "Needs sign-in",
    Status.FAILED: "Failed",
    Status.COOLDOWN: "Waiting to retry",
    Status.STOPPED: "Stopped",
}


def status_text(state: ServerState, now: float | None = None) -> str:
    """What a person reads next to the server's name (with the Cooldown countdown)."""
    text = STATUS_TEXT[state.status]
    if state.status is Status.COOLDOWN and state.retry_at is not None:
        # Rounded up: "0 s" only once the retry is due, and every view that reads the
        # same clock (ui/models/clock.py) shows the same second.
        left = max(0, math.ceil(state.retry_at - (time.time() if now is None else now)))
        # A cooldown follows a failure: say so, with when the next try is.
        text = f"Failed, retrying in {left} s" if state.error else f"Retrying in {left} s"
    return text


def summary(states: Iterable[ServerState]) -> str:
    """A one-line summary for the tooltip until the hub sends its own discovery summary."""
    states = list(states)
    if not states:
        return "Portico: no servers configured"
    counts: dict[str, int] = {}
    for state in states:
        if state.status in NEEDS_PERSON:
            key = "need you"
        elif state.status in BROKEN:
            key = "failed"
        elif state.status in BUSY:
            key = "connecting"
        elif state.status in FINE:
            key = "running"
        else:
            key = state.status.value.lower()
        counts[key] = counts.get(key, 0) + 1
    tools = sum(s.tool_count for s in states if s.status is Status.RUNNING)
    order = ["running", "connecting", "need you", "failed"]
    parts = [_count(counts[k], k) for k in order if k in counts]
    parts += [_count(n, k) for k, n in counts.items() if k not in order]
    noun = "server" if len(states) == 1 else "servers"
    tool_noun = "tool" if tools == 1 else "tools"
    return f"{len(states)} {noun}: {', '.join(parts)}; {tools} {tool_noun}"


def endpoint_line(url: str | None) -> str:
    """The local endpoint's line in the tray's menu and tooltip."""
    if url is None:
        return "Endpoint for other MCP clients: off"
    return f"Endpoint for other MCP clients: on at {url}"


def tooltip(states: list[ServerState], hub_summary: str | None, url: str | None) -> str:
    """The tray's tooltip: the servers (live from the states; the hub's line only until
    the first state arrives), then the endpoint's line."""
    servers = summary(states) if states else hub_summary or summary([])
    return f"{servers}\n{endpoint_line(url)}"


def _count(n: int, key: str) -> str:
    """ "1 needs you", "2 need you" (the other keys read the same for any count)."""
    return f"{n} needs you" if key == "need you" and n == 1 else f"{n} {key}"


class RateLimiter:
    """At most one notification per key (e.g. server + kind) every ``interval`` seconds."""

    def __init__(self, interval: float = 60.0, clock: Callable[[], float] = time.monotonic):
        self.interval = interval
        self._clock = clock
        self._last: dict[str, float] = {}

    def allow(self, key: str) -> bool:
        now = self._clock()
        last = self._last.get(key)
        if last is not None and now - last < self.interval:
            return False
        self._last[key] = now
        return True
