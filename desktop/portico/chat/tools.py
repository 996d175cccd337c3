"""Running a model's tool calls: every call through the ToolGuard, concurrently (the
registry serialises calls to a server without ``supports_parallel_tool_calls``), with
progress and approval events, and an outcome that tells a refusal from a failure."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from portico.chat.events import (
    CANCELLED_BY_PERSON,
    ApprovalAnswered,
    ApprovalAsked,
    CallOutcome,
    Event,
    ToolCallFinished,
    ToolCallProgress,
    ToolCallTask,
)
from portico.policy.guard import ChatContext, Refusal, ToolGuard
from portico.runtime.call_context import CallContext, QuestionAsked, QuestionEvent
from portico.runtime.results import ToolResult
from portico.runtime.task_events import TaskUpdate
from portico.runtime.toolsearch import ActiveSet

log = logging.getLogger(__name__)

Emit = Callable[[Event], None]


class _CallEvents:
    """One call's events for the chat: its progress, its task and its questions, as the
    call's :class:`CallContext` reports them."""

    __slots__ = ("call_id", "emit", "last_task")

    def __init__(self, call_id: str, emit: Emit) -> None:
        self.call_id = call_id
        self.emit = emit
        self.last_task: tuple[str, str | None] | None = None

    async def progress(self, done: float, total: float | None, message: str | None) -> None:
        self.emit(ToolCallProgress(self.call_id, done, total, message))

    def task(self, update: TaskUpdate) -> None:  # the call became a task: say when it changes
        if self.last_task == (update.status, update.message):
            return
        self.last_task = (update.status, update.message)
        self.emit(
            ToolCallTask(
                self.call_id,
                update.server,
                update.tool,
                update.task_id,
                update.status,
                update.message,
            )
        )

    def question(self, event: QuestionEvent) -> None:
        if isinstance(event, QuestionAsked):
            self.emit(ApprovalAsked(self.call_id, event.request))
        elif event.ended_by == "answered":
            choice = event.choice.value if event.choice is not None else None
            self.emit(ApprovalAnswered(self.call_id, choice))
        else:
            note = _ENDED_NOTES[event.ended_by].format(event.message)
            self.emit(ApprovalAnswered(self.call_id, None, note))


_ENDED_NOTES = {"refused": "refused: {}", "timeout": "timed out", "aborted": "aborted"}


@dataclass
class PlannedCall:
    id: str
    name: str
    arguments: Mapping[str, Any]
    problem: str | None = None  # the arguments could not be read: not run


@dataclass
class CallReport:
    id: str
    outcome: CallOutcome
    result: ToolResult | None = None
    error: str | None = None
    duration: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    def model_text(self) -> str:
        """What the model reads back for this call."""
        if self.result is not None:
            return self.result.text() or "(the tool returned nothing)"
        return self.error or f"The call ended: {self.outcome}."


def _error_text(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    if isinstance(exc, KeyError) and text.startswith(("'", '"')):
        text = text[1:-1]
    return text


async def run_call(
    guard: ToolGuard,
    chat: ChatContext,
    active: ActiveSet,
    call: PlannedCall,
    emit: Emit,
    on_report: Callable[[CallReport], None] | None = None,
) -> CallReport:
    """One call; never raises except for its own cancellation (then there is no report
    and the caller records the call as cancelled). ``on_report`` gets the report before
    the ToolCallFinished event goes out."""
    started = time.monotonic()
    if call.problem is not None:
        text = (
            f"The call to '{call.name}' was not run: {call.problem}. Send the arguments as "
            "one JSON object matching the tool's input schema."
        )
        return _reported(CallReport(call.id, "error", error=text), emit, on_report)
    events = _CallEvents(call.id, emit)
    context = CallContext(chat.caller, call.id, events.progress, events.task, events.question)
    try:
        result = await guard.call(  # the guard copies the arguments
            chat, call.name, call.arguments, context=context, active=active
        )
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        duration = time.monotonic() - started
        report = CallReport(call.id, "error", error=_error_text(exc), duration=duration)
        return _reported(report, emit, on_report)
    duration = time.monotonic() - started
    if isinstance(result, Refusal) and result.reason in ("refused", "denied"):
        report = CallReport(call.id, result.reason, error=result.text(), duration=duration)
    else:
        report = CallReport(call.id, "ok", result=result, duration=duration)
    return _reported(report, emit, on_report)


def _reported(
    report: CallReport, emit: Emit, on_report: Callable[[CallReport], None] | None
) -> CallReport:
    if on_report is not None:
        on_report(report)
    result = report.result if report.outcome == "ok" else None
    error = None if result is not None else report.model_text()
    emit(ToolCallFinished(report.id, report.outcome, result, error, report.duration))
    return report


class CallHandle(Protocol):
    """What :func:`cancel_call` needs of a running call (a task, or :class:`_LoneCall`)."""

    def done(self) -> bool: ...

    def cancel(self) -> bool: ...


class _LoneCall:
    """The one call of a round, run in the turn's own task (no task of its own: a task
    and ``asyncio.wait`` cost more than the rest of the chat's part of a call).
    Cancelling it cancels the turn's task once; :func:`_run_lone` takes that
    cancellation back and ends the call as cancelled."""

    __slots__ = ("cancelling", "finished", "task")

    def __init__(self, task: asyncio.Task[Any]) -> None:
        self.task = task
        self.cancelling = False
        self.finished = False

    def done(self) -> bool:
        return self.finished

    def cancel(self) -> bool:
        if self.finished or self.cancelling:
            return False
        self.cancelling = True
        return self.task.cancel()


async def run_calls(
    guard: ToolGuard,
    chat: ChatContext,
    active: ActiveSet,
    calls: Sequence[PlannedCall],
    emit: Emit,
    on_report: Callable[[CallReport], None] | None = None,
    running: dict[str, CallHandle] | None = None,
) -> list[CallReport]:
    """All calls at once; on cancellation every running call is cancelled (its server
    gets notifications/cancelled) and waited for before the cancellation goes on.

    ``running`` (call id -> handle) is filled while the calls run, so a face can cancel
    one call (:func:`cancel_call`): that call's server gets notifications/cancelled, the
    call ends with outcome "cancelled" and a result telling the model the person
    cancelled it, and the other calls go on."""
    task = asyncio.current_task()
    if len(calls) == 1 and task is not None:
        return [await _run_lone(guard, chat, active, calls[0], emit, on_report, running, task)]
    tasks = [
        asyncio.ensure_future(run_call(guard, chat, active, call, emit, on_report))
        for call in calls
    ]
    if running is not None:
        running.update({call.id: task for call, task in zip(calls, tasks, strict=True)})
    try:
        await asyncio.wait(tasks)
    except asyncio.CancelledError:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    finally:
        if running is not None:
            for call in calls:
                running.pop(call.id, None)
    reports = []
    for call, task in zip(calls, tasks, strict=True):
        if task.cancelled():  # the person cancelled this one call
            reports.append(_cancelled(call, emit, on_report))
            continue
        exc = task.exception()
        if exc is not None:  # a bug in the runner; the turn goes on with an error result
            log.error("tool call %s failed in the chat loop: %r", call.name, exc)
            reports.append(CallReport(call.id, "error", error=_error_text(exc)))
        else:
            reports.append(task.result())
    return reports


async def _run_lone(
    guard: ToolGuard,
    chat: ChatContext,
    active: ActiveSet,
    call: PlannedCall,
    emit: Emit,
    on_report: Callable[[CallReport], None] | None,
    running: dict[str, CallHandle] | None,
    task: asyncio.Task[Any],
) -> CallReport:
    handle = _LoneCall(task)
    if running is not None:
        running[call.id] = handle
    try:
        report = await run_call(guard, chat, active, call, emit, on_report)
    except asyncio.CancelledError:
        # the person's cancel, and nobody else's (a Stop of the turn goes on as it came)
        if not handle.cancelling or task.uncancel() > 0:
            raise
        return _cancelled(call, emit, on_report)
    except Exception as exc:  # a bug in the runner; the turn goes on with an error result
        log.error("tool call %s failed in the chat loop: %r", call.name, exc)
        return CallReport(call.id, "error", error=_error_text(exc))
    finally:
        handle.finished = True
        if running is not None:
            running.pop(call.id, None)
    if handle.cancelling:  # the call ended before the cancellation reached it
        task.uncancel()
    return report


def _cancelled(
    call: PlannedCall, emit: Emit, on_report: Callable[[CallReport], None] | None
) -> CallReport:
    report = CallReport(call.id, "cancelled", error=CANCELLED_BY_PERSON)
    if on_report is not None:
        on_report(report)
    emit(ToolCallFinished(call.id, "cancelled", None, CANCELLED_BY_PERSON))
    return report


def cancel_call(running: Mapping[str, CallHandle], call_id: str) -> bool:
    """Cancel one running call of :func:`run_calls`; False if it is not running."""
    task = running.get(call_id)
    if task is None or task.done():
        return False
    return task.cancel()
