"""JSON-RPC messages as lines over a child's pipes, with nothing in between.

The SDK's stdio transport puts a memory stream and a task on each side: a request is
handed to a writer task, which writes it on a later pass of the event loop, and a reply
is read by a reader task, which hands it to the SDK's dispatcher on a later pass again.
Here the sender writes the line itself (the bytes are in the pipe before its ``send``
first suspends) and the dispatcher reads the pipe itself, so a round trip takes two
passes of the loop fewer, and what a caller does after sending (the chat's bookkeeping,
say) runs while the server works instead of before it sees the request. Both are the
SDK's ``ReadStream`` / ``WriteStream`` shapes.
"""

from __future__ import annotations

from collections.abc import Callable
from types import TracebackType

import anyio
import mcp_types as types
from anyio.abc import ByteReceiveStream, ByteSendStream
from mcp.shared.message import SessionMessage

from portico.runtime.serverlog import ServerLog

_BROKEN = (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError)


class _Closable:
    """Closing a stream only marks it (the transport's owner stops the process)."""

    _closed = False

    def close(self) -> None:
        self._closed = True

    async def aclose(self) -> None:
        self._closed = True

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._closed = True


class LineReader(_Closable):
    """The child's stdout as messages, for one reader (the SDK's dispatcher).

    A line that is not JSON-RPC is skipped and shown in the server's log (servers that
    print banners to stdout keep working). Each chunk is scanned once for newlines, so a
    10 MiB reply in 64 KiB chunks costs one pass over it, not one per chunk.
    ``on_end`` runs once, when the output ends or breaks (not when the reader is closed:
    the transport's owner is shutting down then, and says so itself)."""

    def __init__(self, stdout: ByteReceiveStream, log: ServerLog, on_end: Callable[[], object]):
        self._stdout = stdout
        self._log = log
        self._on_end: Callable[[], object] | None = on_end
        self._buffer = bytearray()
        self._scanned = 0
        self._ended = False

    async def receive(self) -> SessionMessage:
        while True:
            if self._closed:
                raise anyio.ClosedResourceError
            if self._ended:
                raise anyio.EndOfStream
            line = self._next_line()
            if line is None:
                await self._fill()
            elif line:
                message = self._parse(line)
                if message is not None:
                    return message

    def _next_line(self) -> bytes | None:
        buffer = self._buffer
        newline = buffer.find(b"\n", self._scanned)
        if newline < 0:
            self._scanned = len(buffer)
            return None
        line = bytes(buffer[:newline]).strip()
        del buffer[: newline + 1]
        self._scanned = 0
        return line

    async def _fill(self) -> None:
        try:
            self._buffer += await self._stdout.receive()
        except (anyio.EndOfStream, *_BROKEN):
            self._ended = True
            on_end, self._on_end = self._on_end, None
            if on_end is not None:
                on_end()
            raise anyio.EndOfStream from None

    def _parse(self, line: bytes) -> SessionMessage | None:
        try:
            return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
        except ValueError:
            shown = line[:200].decode("utf-8", "replace")
            self._log.add(f"ignored a stdout line that is not JSON-RPC: {shown}", "portico")
            return None

    def __aiter__(self) -> LineReader:
        return self

    async def __anext__(self) -> SessionMessage:
        try:
            return await self.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None

    async def __aenter__(self) -> LineReader:
        return self


class LineWriter(_Closable):
    """Messages to the child's stdin, written by the sender itself, whole lines in the
    order they are sent (a write never suspends; only waiting for a full pipe does).
    A broken pipe raises ``anyio.BrokenResourceError`` and runs ``on_broken``."""

    def __init__(self, stdin: ByteSendStream, on_broken: Callable[[], object]):
        self._stdin = stdin
        self._on_broken = on_broken

    async def send(self, item: SessionMessage, /) -> None:
        if self._closed:
            raise anyio.ClosedResourceError
        data = item.message.model_dump_json(by_alias=True, exclude_unset=True)
        try:
            await self._stdin.send((data + "\n").encode())
        except _BROKEN as exc:
            self._closed = True
            self._on_broken()
            raise anyio.BrokenResourceError from exc

    async def __aenter__(self) -> LineWriter:
        return self
