"""Attack: a sandboxed server pipelines plain-HTTP requests on one proxy connection, the
first to a declared host, the next to a host it never declared. Each must be checked: the
undeclared one is refused (403, reported) and never reaches the declared host's server,
even one that keeps its connection open whatever the request says."""

from __future__ import annotations

import asyncio

from portico.runtime.sandbox.netproxy import HostFilter, start_proxy
from tests.runtime.sandbox.targets import short_dir


async def test_each_pipelined_request_is_checked() -> None:
    seen: list[str] = []

    async def keep_alive(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        # serves every request on the connection, Connection: close or not
        try:
            while True:
                head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
                seen.append(head.split("\r\n", 1)[0])
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(keep_alive, "127.0.0.2", 0)
    port = server.sockets[0].getsockname()[1]
    blocked: list[tuple[str, int]] = []
    with short_dir() as run:
        proxy = await start_proxy(
            run / "p.sock",
            HostFilter([f"127.0.0.2:{port}"]),
            lambda host, p: blocked.append((host, p)),
        )
        try:
            reader, writer = await asyncio.open_unix_connection(str(proxy.socket_path))
            writer.write(
                f"POST http://127.0.0.2:{port}/a HTTP/1.1\r\nHost: x\r\n"
                "Content-Length: 5\r\n\r\nhello".encode()
                + f"GET http://127.0.0.3:{port}/b HTTP/1.1\r\nHost: y\r\n\r\n".encode()
                + f"GET http://127.0.0.2:{port}/c HTTP/1.1\r\nHost: x\r\n\r\n".encode()
            )
            await writer.drain()
            answer = await asyncio.wait_for(reader.read(), 10)
            writer.close()
        finally:
            await proxy.close()
            server.close()
            await server.wait_closed()
    assert seen == ["POST /a HTTP/1.1"], seen
    assert blocked == [("127.0.0.3", port)]
    assert answer.startswith(b"HTTP/1.1 200 OK"), answer
    assert b"HTTP/1.1 403 Forbidden" in answer, answer
