"""What a caller hears about a tool call that became a task (tasks extension, SEP-2663).

Kept apart from :mod:`portico.runtime.tasks` (which needs the SDK) so faces and the chat
can import it cheaply. A caller wraps its call in :func:`watching`; the context variable
crosses the policy guard and the registry without new parameters, and every observed task
state arrives as a :class:`TaskUpdate` on the runtime loop.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from portico.runtime.errors import RuntimeFailure

TASKS_EXTENSION: Final = "io.modelcontextprotocol/tasks"
TERMINAL: Final = frozenset({"completed", "failed", "cancelled"})
# Statuses a record may end in on our side: the server's terminal ones, and "expired"
# (the server no longer knows the task).
ENDED: Final = TERMINAL | {"expired"}

STATUS_WORDS: Final = {
    "working": "working…",
    "input_required": "input required",
    "completed": "completed",
    "failed": "failed",
    "cancelled": "cancelled",
    "expired": "expired",
}


@dataclass(frozen=True)
class TaskUpdate:
    """One observed state of a task (the first one arrives with the handle)."""

    server: str
    tool: str
    task_id: str
    status: str
    message: str | None = None
    created_at: str | None = None  # the server's ISO 8601 time
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None
    polls: int = 0  # tasks/get requests so far in this follow
    seen: float = 0.0  # time.time() of this observation

    @property
    def terminal(self) -> bool:
        return self.status in ENDED

    def describe(self) -> str:
        """One line for a person: "task working… — step 2 of 5"."""
        word = STATUS_WORDS.get(self.status, self.status)
        return f"task {word}" + (f" — {self.message}" if self.message else "")


TaskListener = Callable[[TaskUpdate], object]  # what it returns is ignored

_listener: contextvars.ContextVar[TaskListener | None] = contextvars.ContextVar(
    "portico_task_listener", default=None
)
_keepalive: contextvars.ContextVar[Callable[[], None] | None] = contextvars.ContextVar(
    "portico_task_keepalive", default=None
)


class watching:
    """Within this block (and tasks started from it), task updates of tool calls go to
    ``listener`` (called on the runtime loop; it must not block). A class, not a
    generator: every tool call enters one or two (a third of the cost)."""

    __slots__ = ("_listener", "_token")

    def __init__(self, listener: TaskListener) -> None:
        self._listener = listener

    def __enter__(self) -> None:
        self._token = _listener.set(self._listener)

    def __exit__(self, *exc: object) -> None:
        _listener.reset(self._token)


_detached: contextvars.ContextVar[Callable[[], bool] | None] = contextvars.ContextVar(
    "portico_task_detached", default=None
)


class keeping_alive:
    """Set by the connection around a call: ``touch`` pushes the call's deadline (every
    answered poll proves the server is alive); ``detached()`` is true while the app shuts
    down, when a cancelled call leaves its task running on the server (to be followed
    again after the restart) instead of sending ``tasks/cancel``."""

    __slots__ = ("_detached", "_tokens", "_touch")

    def __init__(self, touch: Callable[[], None], detached: Callable[[], bool]) -> None:
        self._touch = touch
        self._detached = detached

    def __enter__(self) -> None:
        self._tokens = (_keepalive.set(self._touch), _detached.set(self._detached))

    def __exit__(self, *exc: object) -> None:
        _keepalive.reset(self._tokens[0])
        _detached.reset(self._tokens[1])


def current_listener() -> TaskListener | None:
    return _listener.get()


def current_keepalive() -> Callable[[], None] | None:
    return _keepalive.get()


def detached() -> bool:
    check = _detached.get()
    return check is not None and check()


def offers_tasks(capabilities: Any) -> bool:
    """Whether the server advertised the extension (``capabilities.extensions``)."""
    extensions = getattr(capabilities, "extensions", None) or {}
    return TASKS_EXTENSION in extensions


class TaskCancelled(RuntimeFailure):
    """The task ended as cancelled (by us or by the server)."""


class TaskGone(RuntimeFailure):
    """The server no longer knows the task (expired past its TTL, or never existed)."""
