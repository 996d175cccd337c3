"""The endpoint on the wire: the gateway's MCP server over Streamable HTTP, served by
uvicorn on the caller's loop, on 127.0.0.1 and (where the platform has them) on a Unix
socket only this user can open.

:meth:`Endpoint.start` binds before it returns, so :attr:`Endpoint.url` is final; port
0 picks a free port. The SDK's own Host/Origin checks are off: ``access.AccessGate``
does them (and the client tokens) in front of it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mcp.server.transport_security import TransportSecuritySettings

from portico.gateway.access import AccessGate
from portico.gateway.cli_routes import CliRoutes
from portico.gateway.clients import ClientBook
from portico.gateway.fast_path import FastPath
from portico.gateway.server import Gateway

log = logging.getLogger(__name__)

PATH = "/mcp"
SHUTDOWN_GRACE = 2.0  # seconds open streams get to end when the endpoint closes


class EndpointError(Exception):
    """The endpoint could not start (port taken, socket path unusable)."""


def _uvicorn_server(config: Any) -> Any:
    import uvicorn

    class QuietServer(uvicorn.Server):
        # The endpoint is part of a bigger program (the app, `portico serve`), which
        # owns the process's signals.
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            yield

    return QuietServer(config)


class Endpoint:
    def __init__(
        self,
        gateway: Gateway,
        book: ClientBook,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        unix_path: Path | None = None,
    ) -> None:
        self.gateway = gateway
        self.book = book
        self.host = host
        self.port = port
        self.unix_path = unix_path
        self._server: Any = None
        self._task: asyncio.Task[None] | None = None
        self._sockets: list[socket.socket] = []
        self.fast: FastPath | None = None  # the fast path in front of the SDK's app
        # discovery.config_stamp of the config the hub was last given (the CLI routes
        # serve only commands that read the same files); set by whoever loads it.
        self.config_stamp: str | None = None

    def _stamp(self) -> str | None:
        return self.config_stamp

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}{PATH}"

    def asgi_app(self) -> Any:
        app = self.gateway.server.streamable_http_app(
            streamable_http_path=PATH,
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
            host=self.host,
            custom_starlette_routes=CliRoutes(self.gateway.hub, self._stamp).routes(),
        )
        self.fast = FastPath(app, self.gateway, PATH)
        return AccessGate(self.fast, self.book, self.gateway.activity)

    def _bind(self) -> list[socket.socket]:
        tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            tcp.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            tcp.bind((self.host, self.port))
            tcp.listen(128)
        except OSError as exc:
            tcp.close()
            raise EndpointError(
                f"cannot listen on {self.host}:{self.port} ({exc.strerror or exc}); "
                "choose another port"
            ) from exc
        tcp.setblocking(False)
        self.port = tcp.getsockname()[1]
        out = [tcp]
        if self.unix_path is not None and hasattr(socket, "AF_UNIX"):
            out.append(self._bind_unix(self.unix_path))
        return out

    def _bind_unix(self, path: Path) -> socket.socket:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        with contextlib.suppress(FileNotFoundError):
            path.unlink()  # a socket left by a process that died
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)  # the socket is created 0600: only this user connects
        try:
            sock.bind(str(path))
            sock.listen(128)
        except OSError as exc:
            sock.close()
            raise EndpointError(f"cannot listen on the socket {path} ({exc})") from exc
        finally:
            os.umask(old)
        sock.setblocking(False)
        return sock

    async def start(self) -> None:
        import uvicorn

        await self.book.load()
        self._sockets = self._bind()
        config = uvicorn.Config(
            self.asgi_app(),
            lifespan="on",
            log_level="warning",
            access_log=False,
            timeout_graceful_shutdown=int(SHUTDOWN_GRACE),
            loop="none",
            ws="none",
        )
        self._server = _uvicorn_server(config)
        self._task = asyncio.create_task(self._server.serve(sockets=self._sockets), name="endpoint")
        while not self._server.started:
            if self._task.done():
                self._task.result()  # raises what stopped it
                raise EndpointError("the endpoint stopped while starting")
            await asyncio.sleep(0.01)

    async def close(self) -> None:
        if self._server is None or self._task is None:
            return
        self._server.should_exit = True
        try:
            await asyncio.wait_for(asyncio.shield(self._task), SHUTDOWN_GRACE + 3.0)
        except TimeoutError:
            self._server.force_exit = True
            self._task.cancel()
            with contextlib.suppress(BaseException):
                await self._task
        if self.unix_path is not None:
            with contextlib.suppress(OSError):
                self.unix_path.unlink()
        self._server = None
