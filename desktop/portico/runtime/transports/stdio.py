"""Our stdio transport: spawn the server, talk JSON lines, keep its stderr and exit code.

Why not the SDK's ``stdio_client``: it hides the process, so a server that dies cannot be
reported as "server exited (code N)", and it needs ``errlog`` to be a real file object
(a pipe plus a reader thread, or a temp file to tail). Here the child's stderr is a pipe
read by a task on the event loop, line by line, into the :class:`ServerLog`; no thread,
no temp file. Messages go straight between the pipes and the SDK (see ``lines``): no task
and no memory stream on either side, and the stdout is scanned once for newlines (the
SDK's re-joins its whole buffer per chunk, quadratic on a 10 MiB result). Shutdown
follows the spec order: close stdin, wait (2 s; 0.3 s when the app or command quits),
then TERM/KILL the process group (the SDK's helper).
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import AsyncIterator, Coroutine
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.lowlevel
from anyio.abc import Process

from portico.runtime.serverlog import ServerLog
from portico.runtime.transports.lines import LineReader, LineWriter

GRACE_SECONDS = 2.0  # after stdin closes, before TERM
# At quit (Hub.close): a server that has not exited this soon after its stdin closed is
# sent TERM. Seven SDK servers took 1.3-1.7 s to leave by themselves on 2 cores.
QUIT_GRACE_SECONDS = 0.3
TERM_SECONDS = 2.0  # after TERM, before KILL
EXIT_WAIT_SECONDS = 1.0  # after stdout EOF, for the exit code to show up


@dataclass
class StdioProcessInfo:
    """What the connection learns about the child process."""

    pid: int | None = None
    returncode: int | None = None
    # stdout ended, or stdin broke (a server that closed its stdin takes no more requests)
    exited: asyncio.Event = field(default_factory=asyncio.Event)
    stderr_done: asyncio.Event = field(default_factory=asyncio.Event)
    closing: bool = False  # we are shutting it down on purpose
    grace: float = GRACE_SECONDS  # after stdin closes, before TERM (shorter at quit)
    self_exit: bool = False  # it ended (as ``exited`` says) before we began shutting down


async def _wait_exit(process: Process, seconds: float) -> bool:
    deadline = anyio.current_time() + seconds
    while process.returncode is None:
        if anyio.current_time() >= deadline:
            return False
        await anyio.sleep(0.01)
    return True


async def _stop(process: Process, grace: float) -> None:
    if process.stdin is not None:
        with suppress(Exception):
            await process.stdin.aclose()
    if await _wait_exit(process, grace):
        return
    if sys.platform == "win32":  # pragma: no cover
        with suppress(ProcessLookupError):
            process.kill()
    else:
        from mcp.os.posix.utilities import terminate_posix_process_tree

        with suppress(Exception):
            await terminate_posix_process_tree(process, TERM_SECONDS)
    await _wait_exit(process, 2.0)


@asynccontextmanager
async def stdio_transport(
    command: str,
    args: list[str],
    *,
    env: dict[str, str],
    cwd: str | None,
    log: ServerLog,
    info: StdioProcessInfo,
) -> AsyncIterator[tuple[LineReader, LineWriter]]:
    process = await anyio.open_process(
        [command, *args],
        env=env,
        cwd=cwd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own process group: we can stop the whole tree
    )
    info.pid = process.pid
    assert process.stdin is not None and process.stdout is not None

    def stdout_ended() -> None:  # said at once: the reader's end is seen right after
        if info.closing:
            return  # the shutdown says the rest
        info.self_exit = True
        tg.start_soon(after_stdout_ends)

    async def after_stdout_ends() -> None:
        with anyio.CancelScope(shield=True):
            await _wait_exit(process, EXIT_WAIT_SECONDS)
            with anyio.move_on_after(EXIT_WAIT_SECONDS):
                await info.stderr_done.wait()
        info.returncode = process.returncode
        info.exited.set()

    def stdin_broke() -> None:  # the reader ends too (pending calls fail)
        if not info.closing:
            tg.start_soon(stop_reading)

    async def stop_reading() -> None:
        assert process.stdout is not None
        await process.stdout.aclose()

    async def stderr_reader() -> None:
        assert process.stderr is not None
        pending = b""
        try:
            async for chunk in process.stderr:
                pending += chunk
                *lines, pending = pending.split(b"\n")
                for raw in lines:
                    log.add(raw.decode("utf-8", "replace"))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            pass
        finally:
            if pending:
                log.add(pending.decode("utf-8", "replace"))
            info.stderr_done.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(stderr_reader)
        reader = LineReader(process.stdout, log, stdout_ended)
        writer = LineWriter(process.stdin, stdin_broke)
        try:
            yield reader, writer
        finally:
            info.closing = True
            writer.close()
            reader.close()
            with anyio.CancelScope(shield=True):  # else anyio re-cancels us every pass
                await _to_the_end(_shut_down(process, info))
            tg.cancel_scope.cancel()
    await anyio.lowlevel.cancel_shielded_checkpoint()


async def _shut_down(process: Process, info: StdioProcessInfo) -> None:
    await _stop(process, info.grace)
    with anyio.move_on_after(1.0):
        await info.stderr_done.wait()
    info.returncode = process.returncode
    info.exited.set()
    # Close every pipe, so the loop's subprocess transport is finished now rather than
    # by the garbage collector later (on a loop that may be closed by then). Bounded: a
    # child that is never reaped (stuck in the kernel) must not hold the shutdown.
    with suppress(Exception), anyio.move_on_after(EXIT_WAIT_SECONDS):
        await process.aclose()


async def _to_the_end(work: Coroutine[Any, Any, None]) -> None:
    """Await ``work`` to its end even if this task is cancelled meanwhile, then go on
    with the cancellation. (anyio's shielded scopes hold off anyio's cancellation, not
    ``Task.cancel()``: a connection stopped while it recycles its process would leave
    the process running and its pipes open.)"""
    job = asyncio.ensure_future(work)
    cancelled = False
    while not job.done():
        try:
            await asyncio.shield(job)
        except asyncio.CancelledError:
            cancelled = True
    if cancelled:
        raise asyncio.CancelledError
    job.result()
