"""Tools that must run as tasks on a 2025-11-25 session (``execution.taskSupport:
"required"``, SEP-1686).

A plain ``tools/call`` of such a tool fails (-32601 from server-everything's
``simulate-research-query``), and the SDK has no client side for these tasks. So the
call is made task-augmented (``params.task``), the task is followed with ``tasks/get``
(its status shown as the call's progress, each answer keeping the call alive), and its
outcome is read with ``tasks/result``, which the server holds until the task ends and
through which it asks its questions (elicitation, sampling: the ordinary callbacks, so
the Prompter). Cancelling the call sends ``tasks/cancel``. 2026-07-28 tasks are another
mechanism (``runtime/tasks.py``). No Qt here.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

log = logging.getLogger(__name__)

TASK_TTL_MS = 300_000  # how long the server keeps the task's result for us
POLL_MIN, POLL_MAX = 0.2, 5.0  # seconds between tasks/get, whatever the server suggests
CANCEL_WAIT = 5.0  # seconds for the server to acknowledge tasks/cancel
TERMINAL = frozenset({"completed", "failed", "cancelled"})

Report = Callable[[float, float | None, str | None], Awaitable[None]]


def requires_task(tool: Any, protocol_version: str | None) -> bool:
    """True when ``tool`` may only be called as a 2025-11-25 task on this session."""
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    if protocol_version in MODERN_PROTOCOL_VERSIONS:
        return False
    execution = getattr(tool, "execution", None)
    return getattr(execution, "task_support", None) == "required"


async def call_as_task(client: Any, name: str, arguments: dict[str, Any], report: Report) -> Any:
    """Run ``name`` as a task; returns its ``CallToolResult``."""
    from mcp_types import CallToolResult

    dispatcher = client.session._dispatcher  # the SDK's raw requests: no typed task API
    created = await dispatcher.send_raw_request(
        "tools/call", {"name": name, "arguments": arguments, "task": {"ttl": TASK_TTL_MS}}, {}
    )
    task = created.get("task") if isinstance(created, dict) else None
    if not isinstance(task, dict) or not isinstance(task.get("taskId"), str):
        return CallToolResult.model_validate(created)  # the server ran it at once after all
    task_id: str = task["taskId"]
    await _report(report, 0, task)
    watch = asyncio.ensure_future(_watch(dispatcher, task_id, task, report))
    try:
        result = await dispatcher.send_raw_request("tasks/result", {"taskId": task_id}, {})
    except asyncio.CancelledError:
        with contextlib.suppress(Exception):
            async with asyncio.timeout(CANCEL_WAIT):
                await asyncio.shield(
                    dispatcher.send_raw_request("tasks/cancel", {"taskId": task_id}, {})
                )
        raise
    finally:
        watch.cancel()
        with contextlib.suppress(BaseException):
            await watch
    return CallToolResult.model_validate(result)


async def _watch(dispatcher: Any, task_id: str, task: dict[str, Any], report: Report) -> None:
    """Poll ``tasks/get`` while ``tasks/result`` waits: the status as progress."""
    polls = 0
    last = (task.get("status"), task.get("statusMessage"))
    while task.get("status") not in TERMINAL:
        interval = task.get("pollInterval")
        seconds = interval / 1000 if isinstance(interval, int | float) else 1.0
        await asyncio.sleep(min(POLL_MAX, max(POLL_MIN, seconds)))
        try:
            task = await dispatcher.send_raw_request("tasks/get", {"taskId": task_id}, {})
        except Exception as exc:  # tasks/result still decides the outcome
            log.info("tasks/get %s failed: %s", task_id, exc)
            return
        polls += 1
        now = (task.get("status"), task.get("statusMessage"))
        if now != last:
            last = now
            await _report(report, polls, task)


async def _report(report: Report, step: float, task: dict[str, Any]) -> None:
    status = str(task.get("status") or "working").replace("_", " ")
    message = task.get("statusMessage")
    await report(step, None, f"task {status}: {message}" if message else f"task {status}")
