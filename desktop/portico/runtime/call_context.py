"""A tool call's context: who calls, and who hears what happens to the call.

The caller builds one :class:`CallContext` per call and passes it down
``ToolGuard.call -> Registry.call -> Connection.call_tool``; nothing about a call travels
any other way. The guard tells ``on_question`` about the approval and spend questions it
asks (and puts the call id and the caller into each request, so a face can show the
question where the call is); the connection reports progress to ``progress`` and the
task the call became (tasks extension) to ``on_task``.
"""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from portico.prompts import (
    ApprovalChoice,
    Caller,
    EndedBy,
    SpendApprovalRequest,
    ToolApprovalRequest,
)
from portico.runtime.task_events import TaskListener

# (progress, total, message); a coroutine it returns is awaited
ProgressCallback = Callable[[float, float | None, str | None], Awaitable[None] | None]

_ids = itertools.count(1)


def new_call_id() -> str:
    """An id unique in this process, for callers that have none of their own."""
    return f"call-{next(_ids)}"


@dataclass(frozen=True, slots=True)
class QuestionAsked:
    """The guard asks the person about this call (the request names the call)."""

    request: ToolApprovalRequest | SpendApprovalRequest


@dataclass(frozen=True, slots=True)
class QuestionEnded:
    """The question was answered (``choice``), or ended without an answer (``ended_by``:
    refused, timeout, aborted; ``message`` says how)."""

    choice: ApprovalChoice | None
    ended_by: EndedBy
    message: str = ""


QuestionEvent = QuestionAsked | QuestionEnded


@dataclass(frozen=True, slots=True)
class CallContext:
    """One tool call as its caller made it (see the module's docstring)."""

    caller: Caller
    call_id: str = field(default_factory=new_call_id)
    progress: ProgressCallback | None = None
    on_task: TaskListener | None = None
    on_question: Callable[[QuestionEvent], None] | None = None
