"""tasking: an MCP test server that answers tool calls with tasks (SEP-2663 extension).

Run: ``python tests/servers/tasking.py stdio|http [--port N] [--poll-ms N] [--ttl-ms N]
[--no-tasks]`` (HTTP endpoint ``/mcp`` on 127.0.0.1). mcp 2.3 has no server-side task
support, so the wire methods are bound here with the SDK's ``Extension`` interface: an
interceptor turns ``tools/call`` of a task tool into a ``CreateTaskResult`` when the
request's own client capabilities declare ``io.modelcontextprotocol/tasks`` (otherwise the
tool runs synchronously), and ``tasks/get`` / ``tasks/update`` / ``tasks/cancel`` serve the
in-memory tasks (over HTTP only with ``Mcp-Name`` equal to the task id, else -32020).
``--no-tasks`` serves the same tools without the extension.

Tools (text results; greet, slow_compute, confirm_job and task_log are read-only):
  greet(name)                       sync-only: "Hello, <name>!"
  slow_compute(seconds=1, steps=5)  a task: ``steps`` steps over ``seconds``, status message
                                    "step i of steps"; completes with "computed <steps> steps";
                                    settles to cancelled on tasks/cancel
  failing_job()                     a task that completes with an isError result
  protocol_error_job()              a task that fails with a JSON-RPC error (-32603)
  confirm_job(question)             a task that goes input_required with a form elicitation
                                    (key "confirm-1": {ok: boolean, default true}); completes
                                    with "answer <action> <content as JSON>"
  confirm_delete(filename)          a task asking two questions (keys "delete-1", "really-1":
                                    {confirm: boolean}); "deleted <filename>" when both say yes
  multi_input()                     the same two questions, under the suite's fixture name
  task_log()                        JSON {task_id: [status, tasks/get count]} of every task
"""

from __future__ import annotations

import warm_start  # noqa: F401  (first: tests/servers/warm_start.py)

# isort: split
import argparse
import asyncio
import json
import secrets
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from mcp import MCPError
from mcp.server import MCPServer
from mcp.server.extension import Extension, MethodBinding
from mcp_types import CallToolRequestParams, RequestParams, TextContent, ToolAnnotations

TASKS = "io.modelcontextprotocol/tasks"
TASK_TOOLS = (
    "slow_compute",
    "failing_job",
    "protocol_error_job",
    "confirm_job",
    "confirm_delete",
    "multi_input",
)
CONFIRM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"ok": {"type": "boolean", "title": "Go ahead?", "default": True}},
    "required": ["ok"],
}


def _now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def _text(text: str, error: bool = False) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": error}


@dataclass
class Job:
    task_id: str
    tool: str
    status: str = "working"
    message: str | None = None
    created: str = field(default_factory=_now)
    updated: str = field(default_factory=_now)
    born: float = field(default_factory=time.monotonic)
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    inputs: dict[str, Any] = field(default_factory=dict)  # outstanding inputRequests
    answers: dict[str, Any] = field(default_factory=dict)
    answered: asyncio.Event = field(default_factory=asyncio.Event)
    cancel: asyncio.Event = field(default_factory=asyncio.Event)
    gets: int = 0

    def set(self, status: str, message: str | None = None) -> None:
        if self.status in ("completed", "failed", "cancelled"):
            return
        self.status, self.message, self.updated = status, message, _now()


class TaskParams(RequestParams):
    taskId: str  # the wire name


class UpdateParams(TaskParams):
    inputResponses: dict[str, Any]


def _declared(meta: Any) -> bool:
    caps = (meta or {}).get("io.modelcontextprotocol/clientCapabilities") or {}
    return TASKS in (caps.get("extensions") or {})


class TaskExtension(Extension):
    identifier = TASKS

    def __init__(self, poll_ms: int, ttl_ms: int | None) -> None:
        self.poll_ms = poll_ms
        self.ttl_ms = ttl_ms
        self.jobs: dict[str, Job] = {}
        self.workers: set[asyncio.Task[None]] = set()

    def methods(self) -> Sequence[MethodBinding]:
        return (
            MethodBinding("tasks/get", TaskParams, self.get),
            MethodBinding("tasks/update", UpdateParams, self.update),
            MethodBinding("tasks/cancel", TaskParams, self.cancel),
        )

    def _wire(self, job: Job) -> dict[str, Any]:
        data: dict[str, Any] = {
            "taskId": job.task_id,
            "status": job.status,
            "createdAt": job.created,
            "lastUpdatedAt": job.updated,
            "ttlMs": self.ttl_ms,
            "pollIntervalMs": self.poll_ms,
        }
        if job.message is not None:
            data["statusMessage"] = job.message
        if job.status == "input_required":
            data["inputRequests"] = job.inputs
        if job.status == "completed":
            data["result"] = job.result
        if job.status == "failed":
            data["error"] = job.error
        return data

    def _job(self, params: TaskParams, ctx: Any) -> Job:
        request = getattr(ctx, "request", None)  # the HTTP request (None over stdio)
        headers = getattr(request, "headers", None)
        if headers is not None and headers.get("mcp-name") != params.taskId:
            # SEP-2663: tasks/* carry the task id in Mcp-Name (routing); SEP-2243's code
            raise MCPError(-32020, "Header mismatch: Mcp-Name must be the taskId")
        if not _declared(params.meta):
            raise MCPError(
                -32021,
                "Missing required client capability",
                {"requiredCapabilities": {"extensions": {TASKS: {}}}},
            )
        job = self.jobs.get(params.taskId)
        expired = (
            job is not None
            and self.ttl_ms is not None
            and (time.monotonic() - job.born) * 1000 > self.ttl_ms
        )
        if job is None or expired:
            raise MCPError(-32602, f"Unknown task: {params.taskId}")
        return job

    async def get(self, ctx: Any, params: TaskParams) -> dict[str, Any]:
        job = self._job(params, ctx)
        job.gets += 1
        return {"resultType": "complete", **self._wire(job)}

    async def update(self, ctx: Any, params: UpdateParams) -> dict[str, Any]:
        job = self._job(params, ctx)
        for key, value in params.inputResponses.items():
            if key in job.inputs:
                job.answers[key] = value
                del job.inputs[key]
        if not job.inputs:
            job.answered.set()
        return {"resultType": "complete"}

    async def cancel(self, ctx: Any, params: TaskParams) -> dict[str, Any]:
        job = self._job(params, ctx)
        job.cancel.set()
        return {"resultType": "complete"}

    async def intercept_tool_call(
        self, params: CallToolRequestParams, ctx: Any, call_next: Any
    ) -> Any:
        if params.name not in TASK_TOOLS or not _declared(params.meta):
            return await call_next(ctx)
        job = Job(task_id=secrets.token_urlsafe(16), tool=params.name)
        self.jobs[job.task_id] = job
        worker = asyncio.ensure_future(self._run(job, dict(params.arguments or {})))
        self.workers.add(worker)
        worker.add_done_callback(self.workers.discard)
        return {"resultType": "task", **self._wire(job)}

    async def _run(self, job: Job, args: dict[str, Any]) -> None:
        waiter = asyncio.ensure_future(job.cancel.wait())
        work = asyncio.ensure_future(self._work(job, args))
        done, _ = await asyncio.wait({waiter, work}, return_when=asyncio.FIRST_COMPLETED)
        if waiter in done and not work.done():
            work.cancel()
            job.set("cancelled", "cancelled at the client's request")
        waiter.cancel()

    async def _work(self, job: Job, args: dict[str, Any]) -> None:
        if job.tool == "slow_compute":
            steps = max(int(args.get("steps", 5)), 1)
            seconds = float(args.get("seconds", 1))
            for i in range(1, steps + 1):
                job.set("working", f"step {i} of {steps}")
                await asyncio.sleep(seconds / steps)
            job.result = _text(f"computed {steps} steps")
            job.set("completed", "done")
        elif job.tool == "failing_job":
            await asyncio.sleep(0.2)
            job.result = _text("the job broke: disk full", error=True)
            job.set("completed")
        elif job.tool == "protocol_error_job":
            await asyncio.sleep(0.2)
            job.error = {"code": -32603, "message": "the worker crashed"}
            job.set("failed", "the worker crashed")
        elif job.tool == "confirm_job":
            job.inputs = {
                "confirm-1": {
                    "method": "elicitation/create",
                    "params": {
                        "mode": "form",
                        "message": str(args.get("question", "Go ahead?")),
                        "requestedSchema": CONFIRM_SCHEMA,
                    },
                }
            }
            job.set("input_required", "waiting for your answer")
            await job.answered.wait()
            job.set("working", "answer received")
            answer = job.answers.get("confirm-1") or {}
            content = json.dumps(answer.get("content"), sort_keys=True)
            job.result = _text(f"answer {answer.get('action')} {content}")
            job.set("completed")
        elif job.tool in (
            "confirm_delete",
            "multi_input",
        ):  # two questions (the suite's partial-answer case)
            name = str(args.get("filename", "file"))
            schema = {"type": "object", "properties": {"confirm": {"type": "boolean"}}}
            job.inputs = {
                key: {
                    "method": "elicitation/create",
                    "params": {"mode": "form", "message": text, "requestedSchema": schema},
                }
                for key, text in (("delete-1", f"Delete {name}?"), ("really-1", "Really?"))
            }
            job.set("input_required", "waiting for two answers")
            await job.answered.wait()
            yes = all((a.get("content") or {}).get("confirm") for a in job.answers.values())
            job.result = _text(f"deleted {name}" if yes else f"kept {name}")
            job.set("completed")


def build(poll_ms: int, ttl_ms: int | None, tasks: bool) -> MCPServer:
    extension = TaskExtension(poll_ms, ttl_ms)
    server = MCPServer("tasking", extensions=[extension] if tasks else [])
    quiet = ToolAnnotations(read_only_hint=True)  # runs without an approval question

    @server.tool(structured_output=False, annotations=quiet)
    def greet(name: str = "you") -> str:
        return f"Hello, {name}!"

    @server.tool(structured_output=False, annotations=quiet)
    async def slow_compute(seconds: float = 1.0, steps: int = 5) -> str:
        """Works for a while (a task when the client supports tasks)."""
        await asyncio.sleep(seconds)
        return f"computed {steps} steps"

    @server.tool(structured_output=False)
    def failing_job() -> list[TextContent]:
        raise ValueError("the job broke: disk full")

    @server.tool(structured_output=False)
    def protocol_error_job() -> str:
        raise MCPError(-32603, "the worker crashed")

    @server.tool(structured_output=False, annotations=quiet)
    def confirm_job(question: str = "Go ahead?") -> str:
        return "confirm_job needs a client that supports tasks"

    @server.tool(structured_output=False)
    def confirm_delete(filename: str) -> str:
        return "confirm_delete needs a client that supports tasks"

    @server.tool(structured_output=False)
    def multi_input() -> str:
        return "multi_input needs a client that supports tasks"

    @server.tool(structured_output=False, annotations=quiet)
    def task_log() -> str:
        return json.dumps({k: [j.status, j.gets] for k, j in extension.jobs.items()})

    return server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("transport", choices=["stdio", "http"])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--poll-ms", type=int, default=50)
    parser.add_argument("--ttl-ms", type=int, default=None)
    parser.add_argument("--no-tasks", action="store_true")
    opts = parser.parse_args()
    server = build(opts.poll_ms, opts.ttl_ms, not opts.no_tasks)
    if opts.transport == "stdio":
        server.run("stdio")
    else:
        server.run("streamable-http", host="127.0.0.1", port=opts.port)
    sys.exit(0)


if __name__ == "__main__":
    main()
