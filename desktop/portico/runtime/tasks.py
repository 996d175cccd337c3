"""The tasks extension (``io.modelcontextprotocol/tasks``, SEP-2663), client side.

A 2026-07-28 server that negotiated the extension may answer ``tools/call`` with a task
handle (``resultType: "task"``) instead of the result. The SDK's ``ClientExtension`` claim
hands that handle to :meth:`TasksExtension.resolve`, which follows the task to its end:
``tasks/get`` at the server's ``pollIntervalMs``, ``input_required`` requests answered
through the same callbacks as any elicitation or sampling request (so through the
Prompter), then ``tasks/update`` with the answers; a completed task's ``result`` becomes the
call's ordinary ``CallToolResult``. Cancelling the call (Stop, Cancel, a chat that stops)
sends ``tasks/cancel`` before the cancellation goes on.

The SDK's resolver gets no per-call context, so :meth:`TasksExtension.resolve` hands the
handle back to the call (:class:`TaskHandover`, which the SDK lets through as it is) and
the connection follows the task in the caller's own task with the call's
:class:`~portico.runtime.task_events.TaskWatch`: every status change is a
:class:`TaskUpdate` to the caller's ``on_task``, which the chat and Try it persist so a
task can be followed again after a restart (:func:`follow`).

The extension is not defined on 2025-11-25 sessions (the SDK advertises it only where a
claim is active, 2026-07-28), so a handshake-era server never sees it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import TYPE_CHECKING, Any, ClassVar, Final, Literal

from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp_types import CallToolResult, Request, RequestParams, Result
from pydantic import ConfigDict

from portico.runtime.task_events import (
    TASKS_EXTENSION,
    TERMINAL,
    TaskCancelled,
    TaskGone,
    TaskHandover,
    TaskUpdate,
    TaskWatch,
)

if TYPE_CHECKING:
    from mcp.client.session import ClientSession

log = logging.getLogger(__name__)

DEFAULT_POLL_MS: Final = 1000  # when the server suggests no interval
MIN_POLL_MS: Final = 10  # never spin, whatever the server says
MAX_POLL_MS: Final = 30_000  # a person watching a card should see a change within 30 s
CANCEL_GRACE: Final = 5.0  # how long a tasks/cancel may take while the call is cancelled

# --- the wire -----------------------------------------------------------------------


class _Task(Result):
    """The fields every task shape carries (``Task`` in SEP-2663)."""

    model_config = ConfigDict(extra="allow")
    task_id: str
    status: str
    status_message: str | None = None
    created_at: str | None = None
    last_updated_at: str | None = None
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None


class CreateTaskResult(_Task):
    """A ``tools/call`` answered with a task handle."""

    result_type: Literal["task"] = "task"


class DetailedTask(_Task):
    """A ``tasks/get`` answer: the task, with its inputs, result or error inlined."""

    result_type: str | None = None
    input_requests: dict[str, Any] | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None


class _TaskParams(RequestParams):
    task_id: str


class _UpdateParams(_TaskParams):
    input_responses: dict[str, Any]


class _GetTask(Request[_TaskParams, Literal["tasks/get"]]):
    name_param: ClassVar[str | None] = "taskId"  # SEP-2663: Mcp-Name carries the task id


class _UpdateTask(Request[_UpdateParams, Literal["tasks/update"]]):
    name_param: ClassVar[str | None] = "taskId"


class _CancelTask(Request[_TaskParams, Literal["tasks/cancel"]]):
    name_param: ClassVar[str | None] = "taskId"


class _Ack(Result):
    model_config = ConfigDict(extra="allow")


# --- following a task ---------------------------------------------------------------------


def poll_delay(task: _Task) -> float:
    """Seconds to wait before the next ``tasks/get``: the server's interval, bounded."""
    ms = task.poll_interval_ms if task.poll_interval_ms is not None else DEFAULT_POLL_MS
    return min(max(ms, MIN_POLL_MS), MAX_POLL_MS) / 1000.0


async def get_task(session: ClientSession, task_id: str) -> DetailedTask:
    return await session.send_request(
        _GetTask(method="tasks/get", params=_TaskParams(task_id=task_id)), DetailedTask
    )


async def cancel_task(session: ClientSession, task_id: str) -> None:
    await session.send_request(
        _CancelTask(method="tasks/cancel", params=_TaskParams(task_id=task_id)), _Ack
    )


class _Follower:
    def __init__(
        self, session: ClientSession, server: str, tool: str, task_id: str, watch: TaskWatch
    ) -> None:
        self.session = session
        self.server = server
        self.tool = tool
        self.task_id = task_id
        self.polls = 0
        self.answered: set[str] = set()  # inputRequests keys already answered
        self.listener = watch.listener
        self.keepalive = watch.keepalive
        self._detached = watch.detached

    @property
    def detached(self) -> bool:
        return self._detached()

    def tell(self, task: _Task, status: str | None = None, message: str | None = None) -> None:
        if self.listener is None:
            return
        update = TaskUpdate(
            server=self.server,
            tool=self.tool,
            task_id=self.task_id,
            status=status or task.status,
            message=message if message is not None else task.status_message,
            created_at=task.created_at,
            ttl_ms=task.ttl_ms,
            poll_interval_ms=task.poll_interval_ms,
            polls=self.polls,
            seen=time.time(),
        )
        try:
            self.listener(update)
        except Exception:  # a face's bookkeeping never breaks the call
            log.exception("%s: the task listener failed", self.server)

    async def run(self, first: _Task) -> CallToolResult:
        task: _Task = first
        self.tell(task)
        try:
            while True:
                if isinstance(task, DetailedTask):
                    if task.status in TERMINAL:
                        return self.finish(task)
                    if task.status == "input_required" and task.input_requests:
                        await self.answer(task.input_requests)
                        task = await self.poll()
                        continue
                await asyncio.sleep(poll_delay(task))
                task = await self.poll()
        except asyncio.CancelledError:
            await self.cancel(task)
            raise

    async def poll(self) -> DetailedTask:
        from mcp import MCPError

        before = _Task(task_id=self.task_id, status="working")
        try:
            task = await get_task(self.session, self.task_id)
        except MCPError as exc:
            if _unknown_task(exc):
                self.tell(before, "expired", exc.error.message if exc.error else str(exc))
                raise TaskGone(
                    f"{self.server}: the server no longer has task {self.task_id} of tool"
                    f" {self.tool!r} ({exc}); it may have expired"
                ) from exc
            raise
        self.polls += 1
        if self.keepalive is not None:
            self.keepalive()
        self.tell(task)
        return task

    async def answer(self, requests: dict[str, Any]) -> None:
        """Answer the task's new input requests (each once) and send them with
        ``tasks/update``; a refused one cancels the task."""
        from mcp import MCPError
        from mcp.client.session import ClientRequestContext
        from mcp_types import ErrorData, InputRequest
        from pydantic import TypeAdapter

        adapter: TypeAdapter[Any] = TypeAdapter(InputRequest)
        responses: dict[str, Any] = {}
        for key, raw in requests.items():
            if key in self.answered:
                continue
            request = adapter.validate_python(raw)
            params = getattr(request, "params", None)
            ctx = ClientRequestContext(
                session=self.session, request_id=key, meta=getattr(params, "meta", None)
            )
            reply = await self.session.dispatch_input_request(ctx, request)
            if isinstance(reply, ErrorData):
                with contextlib.suppress(MCPError):
                    await cancel_task(self.session, self.task_id)
                raise MCPError.from_error_data(reply)
            responses[key] = reply.model_dump(by_alias=True, mode="json", exclude_none=True)
        if not responses:
            return
        await self.session.send_request(
            _UpdateTask(
                method="tasks/update",
                params=_UpdateParams(task_id=self.task_id, input_responses=responses),
            ),
            _Ack,
        )
        self.answered.update(responses)

    def finish(self, task: DetailedTask) -> CallToolResult:
        from mcp import MCPError
        from mcp_types import ErrorData

        if task.status == "completed":
            return CallToolResult.model_validate(task.result or {"content": []})
        if task.status == "failed":
            error = task.error or {"code": -32603, "message": "the task failed"}
            raise MCPError.from_error_data(ErrorData.model_validate(error))
        why = f": {task.status_message}" if task.status_message else ""
        raise TaskCancelled(
            f"{self.server}: task {self.task_id} of {self.tool!r} was cancelled{why}"
        )

    async def cancel(self, task: _Task) -> None:
        """Tell the server (shielded, bounded) while our own cancellation goes on."""
        if task.status in TERMINAL:
            return
        if self.detached:
            log.info("%s: leaving task %s running (shutting down)", self.server, self.task_id)
            return
        self.tell(task, "cancelled", "cancelled by you")
        sender = asyncio.ensure_future(cancel_task(self.session, self.task_id))
        try:
            async with asyncio.timeout(CANCEL_GRACE):
                await asyncio.shield(sender)
        except BaseException as exc:  # the call is being cancelled anyway
            if not isinstance(exc, asyncio.CancelledError):
                log.info("%s: tasks/cancel %s failed: %s", self.server, self.task_id, exc)


def _unknown_task(exc: Any) -> bool:
    """An answer meaning "no such task": invalid params (the spec's code for an unknown
    id), or a message that says so."""
    error = getattr(exc, "error", None)
    if error is None:
        return False
    text = (error.message or "").lower()
    return error.code == -32602 or any(w in text for w in ("not found", "unknown", "expired"))


async def follow(
    session: ClientSession, server: str, tool: str, task_id: str, watch: TaskWatch
) -> CallToolResult:
    """Follow a known task (one persisted before a restart) to its result."""
    follower = _Follower(session, server, tool, task_id, watch)
    return await follower.run(await follower.poll())


async def follow_handle(
    session: ClientSession, server: str, handover: TaskHandover, watch: TaskWatch
) -> CallToolResult:
    """Follow the task a ``tools/call`` was just answered with to its result."""
    follower = _Follower(session, server, handover.tool, handover.handle.task_id, watch)
    return await follower.run(handover.handle)


class TasksExtension(ClientExtension):
    """The client half of the tasks extension, one per connection."""

    identifier = TASKS_EXTENSION

    def __init__(self, server: str) -> None:
        self.server = server

    def claims(self) -> list[ResultClaim[Any]]:
        return [ResultClaim(result_type="task", model=CreateTaskResult, resolve=self.resolve)]

    async def resolve(self, handle: CreateTaskResult, ctx: ClaimContext) -> CallToolResult:
        raise TaskHandover(handle, ctx.tool_name)
