"""Our stdio transport: spawn the server, talk JSON lines, keep its stderr and exit code.

Why not the SDK's ``stdio_client``: it hides the process, so a server that dies cannot be
reported as "server exited (code N)", and it needs ``errlog`` to be a real file object
(a pipe plus a reader thread, or a temp file to tail). Here the child's stderr is a pipe
read by a task on the event loop, line by line, into the :class:`ServerLog`; no thread,
no temp file. The stdout reader scans each chunk once for newlines (the SDK's re-joins
its whole buffer per chunk, quadratic on a 10 MiB result). Shutdown follows the spec
order: close stdin, wait, then TERM/KILL the process group (the SDK's helper).
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field

import anyio
import anyio.lowlevel
import mcp_types as types
from anyio.abc import Process
from mcp.shared.message import SessionMessage

from portico.runtime.serverlog import ServerLog

GRACE_SECONDS = 2.0  # after stdin closes, before TERM
TERM_SECONDS = 2.0  # after TERM, before KILL
EXIT_WAIT_SECONDS = 1.0  # after stdout EOF, for the exit code to show up


@dataclass
class StdioProcessInfo:
    """What the connection learns about the child process."""

    pid: int | None = None
    returncode: int | None = None
    exited: asyncio.Event = field(default_factory=asyncio.Event)  # stdout ended
    stderr_done: asyncio.Event = field(default_factory=asyncio.Event)
    closing: bool = False  # we are shutting it down on purpose
    self_exit: bool = False  # stdout ended before we began shutting down


async def _wait_exit(process: Process, seconds: float) -> bool:
    deadline = anyio.current_time() + seconds
    while process.returncode is None:
        if anyio.current_time() >= deadline:
            return False
        await anyio.sleep(0.01)
    return True


async def _stop(process: Process) -> None:
    if process.stdin is not None:
        with suppress(Exception):
            await process.stdin.aclose()
    if await _wait_exit(process, GRACE_SECONDS):
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
) -> AsyncIterator[tuple[object, object]]:
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
    read_send, read_recv = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_send, write_recv = anyio.create_memory_object_stream[SessionMessage](0)

    async def stdout_reader() -> None:
        assert process.stdout is not None
        buffer = bytearray()
        scanned = 0
        try:
            async with read_send:
                async for chunk in process.stdout:
                    buffer += chunk
                    while True:
                        newline = buffer.find(b"\n", scanned)
                        if newline < 0:
                            scanned = len(buffer)
                            break
                        line = bytes(buffer[:newline]).strip()
                        del buffer[: newline + 1]
                        scanned = 0
                        if not line:
                            continue
                        try:
                            message = SessionMessage(
                                types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                            )
                        except ValueError:
                            # Servers that print banners or debug output to stdout: keep
                            # going, and show the line where the person can see it.
                            shown = line[:200].decode("utf-8", "replace")
                            log.add(
                                f"ignored a stdout line that is not JSON-RPC: {shown}", "portico"
                            )
                            continue
                        try:
                            await read_send.send(message)
                        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                            return
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            pass
        finally:
            if not info.closing:
                info.self_exit = True
            with anyio.CancelScope(shield=True):
                await _wait_exit(process, EXIT_WAIT_SECONDS)
                with anyio.move_on_after(EXIT_WAIT_SECONDS):
                    await info.stderr_done.wait()
            info.returncode = process.returncode
            info.exited.set()

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

    async def stdin_writer() -> None:
        assert process.stdin is not None
        try:
            async with write_recv:
                async for message in write_recv:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await process.stdin.send((data + "\n").encode())
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await read_send.aclose()

    async with anyio.create_task_group() as tg:
        tg.start_soon(stdout_reader)
        tg.start_soon(stderr_reader)
        tg.start_soon(stdin_writer)
        try:
            yield read_recv, write_send
        finally:
            info.closing = True
            with anyio.CancelScope(shield=True):
                write_send.close()
                read_recv.close()
                await _stop(process)
                with anyio.move_on_after(1.0):
                    await info.stderr_done.wait()
                info.returncode = process.returncode
                info.exited.set()
            tg.cancel_scope.cancel()
    # Close every pipe, so the loop's subprocess transport is finished now rather than
    # by the garbage collector later (on a loop that may be closed by then).
    with anyio.CancelScope(shield=True), suppress(Exception):
        await process.aclose()
    await anyio.lowlevel.cancel_shielded_checkpoint()
