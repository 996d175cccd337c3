"""A TCP proxy on 127.0.0.1 that can cut the connections carrying a GET (an event
stream), as a proxy or a network blip does, while the POSTs of the session go on."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field


@dataclass(eq=False)  # one per connection, kept in a set by identity
class _Link:
    client: asyncio.StreamWriter
    upstream: asyncio.StreamWriter
    last_method: bytes = b""


@dataclass
class CuttingProxy:
    target_port: int
    port: int = 0
    cuts: int = 0
    _links: set[_Link] = field(default_factory=set)
    _server: asyncio.Server | None = None
    _closed: list[asyncio.StreamWriter] = field(default_factory=list)
    _tasks: set[asyncio.Task[None]] = field(default_factory=set)

    async def start(self) -> int:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = int(self._server.sockets[0].getsockname()[1])
        return self.port

    async def close(self) -> None:
        for link in list(self._links):
            self._drop(link)
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(BaseException):
                await task
        for writer in self._closed:
            with contextlib.suppress(OSError, ConnectionError):
                await writer.wait_closed()

    def cut_event_streams(self) -> int:
        """Close every connection whose latest request is a GET; returns how many."""
        cut = [link for link in self._links if link.last_method == b"GET"]
        for link in cut:
            self._drop(link)
        self.cuts += len(cut)
        return len(cut)

    def _drop(self, link: _Link) -> None:
        self._links.discard(link)
        for writer in (link.client, link.upstream):
            writer.close()
            self._closed.append(writer)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        with contextlib.suppress(asyncio.CancelledError):  # the proxy closes: its normal end
            await self._relay(reader, writer)

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        except OSError:
            writer.close()
            self._closed.append(writer)
            return
        link = _Link(writer, up_writer)
        self._links.add(link)

        async def pump(source: asyncio.StreamReader, sink: asyncio.StreamWriter, out: bool) -> None:
            with contextlib.suppress(OSError, ConnectionError):
                while chunk := await source.read(65536):
                    if out:
                        method = chunk.split(b" ", 1)[0]
                        if method in (b"GET", b"POST", b"DELETE"):
                            link.last_method = method
                    sink.write(chunk)
                    await sink.drain()
            self._drop(link)

        await asyncio.gather(pump(reader, up_writer, True), pump(up_reader, writer, False))
