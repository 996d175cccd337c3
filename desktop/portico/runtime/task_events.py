"""What a caller hears about a tool call that became a task (tasks extension, SEP-2663).

Kept apart from :mod:`portico.runtime.tasks` (which needs the SDK) so faces and the chat
can import it cheaply. A caller names its listener in the call's ``CallContext``
(``on_task``); every observed task state arrives there as a :class:`TaskUpdate` on the
runtime loop.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from portico.runtime.errors import RuntimeFailure

if TYPE_CHECKING:
    from portico.runtime.tasks import CreateTaskResult

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


@dataclass(frozen=True, slots=True)
class TaskWatch:
    """What the connection hands the follower of a call's task: who hears its updates
    (``listener``, on the runtime loop; it must not block), ``keepalive`` (every answered
    poll proves the server alive and pushes the call's deadline) and ``detached`` (true
    while the app shuts down: a cancelled call then leaves its task running on the server,
    to be followed again after the restart, instead of sending ``tasks/cancel``)."""

    listener: TaskListener | None = None
    keepalive: Callable[[], None] | None = None
    detached: Callable[[], bool] = lambda: False


def offers_tasks(capabilities: Any) -> bool:
    """Whether the server advertised the extension (``capabilities.extensions``)."""
    extensions = getattr(capabilities, "extensions", None) or {}
    return TASKS_EXTENSION in extensions


class TaskCancelled(RuntimeFailure):
    """The task ended as cancelled (by us or by the server)."""


class TaskGone(RuntimeFailure):
    """The server no longer knows the task (expired past its TTL, or never existed)."""


class TaskHandover(Exception):
    """Raised by the resolver the SDK calls with a task handle: it carries the handle back
    out of ``Client.call_tool`` to the connection's call, which follows the task with the
    call's own context (the SDK lets a resolver's exception through as it is)."""

    def __init__(self, handle: CreateTaskResult, tool: str) -> None:
        super().__init__(f"tools/call {tool} became task {handle.task_id}")
        self.handle = handle
        self.tool = tool
