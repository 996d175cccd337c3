"""A connection's feature part: tool calls that became tasks (``runtime/tasks.py``).

A call the server answers with a task handle is followed to its result here, and so is a
task the server created before a restart (:meth:`CallTasks.follow`). Every update is
published (``TaskChanged``), shown as the call's progress and passed to the caller.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from portico.runtime.call_context import CallContext
from portico.runtime.errors import RuntimeFailure
from portico.runtime.events import EventBus, TaskChanged
from portico.runtime.task_events import (
    TASKS_EXTENSION,
    TaskHandover,
    TaskUpdate,
    TaskWatch,
    offers_tasks,
)

if TYPE_CHECKING:
    from mcp import Client


class CallTasks:
    """The tasks of one server's calls: followed, published, shown as progress."""

    def __init__(self, name: str, bus: EventBus) -> None:
        self._name = name
        self._bus = bus
        # True while the app shuts down: cancelled calls leave their tasks running.
        self.detach = False
        self._reports: set[asyncio.Future[Any]] = set()  # task updates shown as progress

    async def follow_handle(
        self,
        client: Client,
        name: str,
        handover: TaskHandover,
        context: CallContext | None,
        alive: Callable[[], None],
    ) -> Any:
        """The call ``name`` became a task: follow it to its CallToolResult."""
        from portico.runtime import tasks

        result = await tasks.follow_handle(
            client.session, self._name, handover, self.watch(context, alive)
        )
        if not result.is_error:  # what the SDK does for a result it resolves itself
            await client.session.validate_tool_result(name, result)
        return result

    def offered(self, capabilities: Any, task_id: str) -> None:
        """RuntimeFailure unless the server (still) offers tasks."""
        if not offers_tasks(capabilities):
            raise RuntimeFailure(
                f"{self._name} no longer offers tasks ({TASKS_EXTENSION}); the result"
                f" of task {task_id} cannot be fetched"
            )

    async def follow(
        self, client: Client, tool: str, task_id: str, context: CallContext | None
    ) -> Any:
        """Follow a task this server created earlier (before a restart) to its result."""
        from portico.runtime import tasks

        watch = self.watch(context, lambda: None)
        return await tasks.follow(client.session, self._name, tool, task_id, watch)

    def watch(self, context: CallContext | None, alive: Callable[[], None]) -> TaskWatch:
        """Publish a call's task updates, show them as the call's progress, and pass
        them to the caller (the chat, Try it)."""
        report = context.progress if context is not None else None
        outer = context.on_task if context is not None else None

        def heard(update: TaskUpdate) -> None:
            self._bus.publish(TaskChanged(self._name, update))
            if report is not None and not update.terminal:  # the call's end says the rest
                outcome = report(float(update.polls), None, update.describe())
                if asyncio.iscoroutine(outcome):
                    pending = asyncio.ensure_future(outcome)
                    self._reports.add(pending)
                    pending.add_done_callback(self._reports.discard)
            if outer is not None:
                outer(update)

        return TaskWatch(heard, alive, lambda: self.detach)
