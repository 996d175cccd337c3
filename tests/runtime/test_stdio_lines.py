"""The stdio transport's line streams against real child processes: concurrent sends
arrive whole and in order through a full pipe, a broken stdin ends the reader too, and
the process is stopped when the transport closes."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp.shared.message import SessionMessage

from portico.runtime.serverlog import ServerLog
from portico.runtime.transports.lines import LineReader, LineWriter
from portico.runtime.transports.stdio import StdioProcessInfo, stdio_transport

pytestmark = pytest.mark.slow  # real processes

# Reads stdin lines and writes them back to stdout, slowly at first, so the pipe fills
# and senders have to wait for it.
ECHO = """
import sys, time
time.sleep(0.3)
for line in sys.stdin:
    sys.stdout.write(line)
    sys.stdout.flush()
"""
# Closes its stdin at once and stays (its stdout stays open).
DEAF = "import os, time; os.close(0); time.sleep(60)"


def _note(sender: int, seq: int, size: int) -> SessionMessage:
    note = types.JSONRPCNotification(
        jsonrpc="2.0",
        method="notifications/message",
        params={"sender": sender, "seq": seq, "pad": "x" * size},
    )
    return SessionMessage(note)


def _transport(
    script: str, tmp_path: Path, info: StdioProcessInfo
) -> AbstractAsyncContextManager[tuple[LineReader, LineWriter]]:
    log = ServerLog("lines", file=tmp_path / "lines.log")
    return stdio_transport(
        sys.executable, ["-c", script], env=dict(os.environ), cwd=None, log=log, info=info
    )


async def test_concurrent_sends_arrive_whole_and_in_order(tmp_path: Path) -> None:
    info = StdioProcessInfo()
    senders, each, size = 8, 40, 9000  # ~2.9 MB: many times a pipe's buffer
    sent: list[tuple[int, int]] = []
    async with _transport(ECHO, tmp_path, info) as (reader, writer):

        async def send(sender: int) -> None:
            for seq in range(each):
                sent.append((sender, seq))  # the order of the send() calls
                await writer.send(_note(sender, seq, size))

        async with anyio.create_task_group() as tg:
            for sender in range(senders):
                tg.start_soon(send, sender)
            got: list[tuple[int, int]] = []
            with anyio.fail_after(60):
                while len(got) < senders * each:
                    message = (await reader.receive()).message
                    assert isinstance(message, types.JSONRPCNotification)
                    params = message.params
                    assert params is not None
                    assert params["pad"] == "x" * size
                    got.append((params["sender"], params["seq"]))
    assert got == sent
    assert info.exited.is_set() and info.closing and not info.self_exit


async def test_a_broken_stdin_fails_the_send_and_ends_the_reader(tmp_path: Path) -> None:
    info = StdioProcessInfo()
    async with _transport(DEAF, tmp_path, info) as (reader, writer):
        await asyncio.sleep(0.5)  # the child has closed its stdin
        with anyio.fail_after(10), pytest.raises(anyio.BrokenResourceError):
            for seq in range(1000):
                await writer.send(_note(0, seq, 100))
        with anyio.fail_after(10), pytest.raises(anyio.EndOfStream):
            await reader.receive()  # its stdout is still open: the reader is ended for it
        with pytest.raises(anyio.ClosedResourceError):
            await writer.send(_note(0, 0, 1))
        pid = info.pid
    assert pid is not None
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # the transport stopped it on the way out


async def test_a_server_that_exits_ends_the_reader_and_says_so(tmp_path: Path) -> None:
    info = StdioProcessInfo()
    script = "import sys; print('not json-rpc'); sys.stderr.write('bye\\n'); sys.exit(3)"
    log = ServerLog("lines", file=tmp_path / "lines.log")
    transport = stdio_transport(
        sys.executable, ["-c", script], env=dict(os.environ), cwd=None, log=log, info=info
    )
    async with transport as (reader, _):
        with anyio.fail_after(10), pytest.raises(anyio.EndOfStream):
            await reader.receive()
        assert info.self_exit  # said as the end is seen (whoever sees it reports an exit)
        with anyio.fail_after(10):
            await info.exited.wait()
        assert info.self_exit and info.returncode == 3
        with pytest.raises(anyio.EndOfStream):
            await reader.receive()  # and again
    log.close()
    assert any("not json-rpc" in line for line in log.lines)
    assert "bye" in log.stderr_lines


async def test_a_shutdown_under_a_cancelled_scope_waits_without_spinning(
    tmp_path: Path,
) -> None:
    """Leaving the transport because an anyio scope was cancelled still stops the
    process (this one ignores its stdin: the shutdown waits its grace, then TERMs it),
    and waits for that quietly instead of being re-cancelled on every loop pass."""
    info = StdioProcessInfo()
    started = time.process_time()
    with anyio.move_on_after(0.5):
        async with _transport("import time; time.sleep(60)", tmp_path, info):
            await anyio.sleep(30)
    assert info.exited.is_set() and info.returncode is not None
    # The wait took 2 s; re-cancelled on every pass it cost ~0.6 s of CPU, quiet ~0.06 s.
    assert time.process_time() - started < 0.3
