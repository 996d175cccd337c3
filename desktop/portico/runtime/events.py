"""What the hub publishes. Faces subscribe; nothing polls.

Subscribers are called synchronously on the runtime loop, in subscription order. A face on
another thread must hop threads itself (``ui/bridge.py`` does it with queued signals).
A subscriber that raises is logged and kept; it never breaks the publisher.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

log = logging.getLogger(__name__)


class Status(StrEnum):
    DISABLED = "Disabled"
    AWAITING_TRUST = "AwaitingTrust"
    REJECTED = "Rejected"  # the person rejected it at a trust review (their own store)
    CONNECTING = "Connecting"
    RUNNING = "Running"
    LAZY = "Lazy"
    NEEDS_AUTH = "NeedsAuth"
    FAILED = "Failed"
    COOLDOWN = "Cooldown"
    STOPPED = "Stopped"  # removed from config / hub shut down


@dataclass(frozen=True)
class ServerState:
    name: str
    status: Status
    error: str | None = None
    retry_at: float | None = None  # time.time() of the next try (Cooldown)
    tool_count: int = 0
    icon: str | None = None  # the server's own icon, a file in the icon cache (runtime/icons.py)
    tool_icons: tuple[tuple[str, str], ...] = ()  # (tool name, icon file), sorted by name


@dataclass(frozen=True)
class StatusChanged:
    state: ServerState


@dataclass(frozen=True)
class ToolsChanged:
    server: str
    tool_count: int


@dataclass(frozen=True)
class LogLine:
    server: str
    text: str
    stream: str = "stderr"  # "stderr" (the server's own), "portico" (our lines about it),
    # or "mcp" (the server's notifications/message log, with its level)
    level: str = ""  # an MCP log level ("debug" … "emergency") for stream "mcp", else ""
    time: float = field(default_factory=time.time)  # time.time() when it was received


@dataclass(frozen=True)
class ResourceUpdated:
    """A resource the person subscribed to changed on the server (read it again)."""

    server: str
    uri: str


@dataclass(frozen=True)
class ListsChanged:
    """A server's prompts and/or resources list was fetched again after it said it
    changed (tools have ``ToolsChanged``); ``kinds`` holds "prompts" / "resources"."""

    server: str
    kinds: tuple[str, ...]


@dataclass(frozen=True)
class TaskChanged:
    """A tool call's task changed state (tasks extension; ``update`` is a
    ``runtime.task_events.TaskUpdate``)."""

    server: str
    update: Any


@dataclass(frozen=True)
class DiscoveryFinished:
    summary: str


@dataclass(frozen=True)
class AuthRequired:
    """A server parked in NeedsAuth; a face may offer to sign in again."""

    server: str
    reason: str


@dataclass(frozen=True)
class ConfigChanged:
    """A config file changed on disk (and settled); a face reloads and re-applies."""

    files: tuple[str, ...] = ()


@dataclass(frozen=True)
class ActivityChanged:
    """New or updated exchanges in a server's activity log (coalesced, runtime/activity.py)."""

    server: str
    version: int  # the log's change counter (ActivityLog.entries(since=...))


@dataclass(frozen=True)
class SandboxRefused:
    """The sandbox's filtering proxy refused a host a server dialled; a face may offer to
    add ``entry`` (``host:port``) to the server's ``sandbox.network.allow``. ``spec`` is the
    server's ``config.model.ServerSpec`` (its file and scope)."""

    server: str
    host: str
    port: int
    entry: str
    spec: Any


Event = (
    StatusChanged
    | ToolsChanged
    | LogLine
    | DiscoveryFinished
    | AuthRequired
    | ConfigChanged
    | ResourceUpdated
    | ActivityChanged
    | TaskChanged
    | SandboxRefused
    | ListsChanged
)
Subscriber = Callable[[Event], None]


class EventBus:
    def __init__(self) -> None:
        self._subscribers: list[Subscriber] = []

    def subscribe(self, callback: Subscriber) -> Callable[[], None]:
        self._subscribers.append(callback)

        def unsubscribe() -> None:
            if callback in self._subscribers:
                self._subscribers.remove(callback)

        return unsubscribe

    def publish(self, event: Event) -> None:
        """Deliver ``event`` to every subscriber, in order.

        A subscriber that raises is a bug in that subscriber: it is logged at ERROR with
        its traceback (tests fail on it, see tests/conftest.py) and the others still get
        the event, so one broken view never stops a connection or the rest of the app.
        """
        for callback in list(self._subscribers):
            try:
                callback(event)
            except Exception:
                log.exception("event subscriber %r failed on %r", callback, event)
