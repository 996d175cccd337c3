"""Call contexts for tests that call a connection or the registry directly."""

from __future__ import annotations

from portico.prompts import Caller
from portico.runtime.call_context import CallContext, ProgressCallback
from portico.runtime.task_events import TaskListener

TEST_CALLER = Caller("cli")  # a direct call, as `portico mcp call` makes one


def calling(
    progress: ProgressCallback | None = None, on_task: TaskListener | None = None
) -> CallContext:
    """A call's context that reports its progress and its task to the given callbacks."""
    return CallContext(TEST_CALLER, progress=progress, on_task=on_task)
