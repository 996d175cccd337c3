"""The loopback listener that receives the OAuth redirect (always bound to 127.0.0.1).

Port: ``callback_port`` / ``redirect_port`` when set; otherwise ``DEFAULT_PORT``, then any
free port. Path: ``callback_path`` (default ``/mcp/oauth/callback``). The redirect URI
names ``callback_hostname`` / ``redirect_host`` (``127.0.0.1`` or ``localhost``) while the
socket still binds 127.0.0.1; ``redirect_uri`` replaces the URI sent to the server.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import html
import logging
import socket
from dataclasses import dataclass
from urllib.parse import urlparse

from portico.auth.pasteback import (
    PasteError,
    ProviderRefused,
    Redirect,
    StateMismatch,
    parse_redirect,
)
from portico.config.model import DEFAULT_OAUTH_CALLBACK_PATH, OAuthSpec

log = logging.getLogger(__name__)

DEFAULT_PORT = 19876
BIND_HOST = "127.0.0.1"


class ListenerError(Exception):
    """The listener could not start (the message names the key to change)."""


@dataclass(frozen=True)
class RedirectPlan:
    """Where the listener listens and what redirect URI the server is told."""

    port: int | None  # None: not decided yet (default port, then any free one)
    path: str
    host: str  # the host name in the redirect URI
    public_uri: str | None  # oauth.redirect_uri, sent instead of the loopback URI

    @classmethod
    def from_spec(cls, oauth: OAuthSpec | None) -> RedirectPlan:
        oauth = oauth or OAuthSpec()
        path = oauth.callback_path or DEFAULT_OAUTH_CALLBACK_PATH
        if not path.startswith("/"):
            path = "/" + path
        return cls(
            port=oauth.callback_port,
            path=path,
            host=oauth.callback_host or BIND_HOST,
            public_uri=oauth.redirect_uri,
        )

    def uri_for(self, port: int) -> str:
        if self.public_uri:
            return self.public_uri
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{port}{self.path}"


def _free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        # As asyncio.start_server does: a port with connections in TIME_WAIT is free.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((BIND_HOST, port))
        except OSError:
            return False
    return True


def choose_port(plan: RedirectPlan) -> int:
    """The fixed port, else the default port if it is free, else any free port."""
    if plan.port:
        return plan.port
    if _free(DEFAULT_PORT):
        return DEFAULT_PORT
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((BIND_HOST, 0))
        return int(probe.getsockname()[1])


_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>{title}</title>
<style>body{{font-family:system-ui,sans-serif;margin:4em auto;max-width:34em;color:#222}}
h1{{font-size:1.4em}}</style></head>
<body><h1>{title}</h1><p>{body}</p></body></html>
"""


def _page(title: str, body: str) -> bytes:
    return _PAGE.format(title=html.escape(title), body=html.escape(body)).encode()


class LoopbackListener:
    """Accepts one redirect on ``path``; ``result`` resolves with the parsed redirect.

    Every callback is checked against the login's state first: one with another state (or
    none) is answered 400 and ignored with a log line, and the login keeps waiting; an
    error with this login's state (the person declined) ends it with ``ProviderRefused``.
    """

    def __init__(self, plan: RedirectPlan, port: int, server_name: str, expected_state: str):
        self.plan = plan
        self.port = port
        self.server_name = server_name
        self.expected_state = expected_state
        self.result: asyncio.Future[Redirect] = asyncio.get_running_loop().create_future()
        self._server: asyncio.Server | None = None

    @property
    def redirect_uri(self) -> str:
        return self.plan.uri_for(self.port)

    async def start(self) -> None:
        """Listen. When the port was not fixed by config and another process took it
        since it was chosen, move to any free port (``port`` then says which)."""
        try:
            self._server = await asyncio.start_server(self._handle, BIND_HOST, self.port)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE and not self.plan.port and not self.plan.public_uri:
                self._server = await asyncio.start_server(self._handle, BIND_HOST, 0)
                self.port = int(self._server.sockets[0].getsockname()[1])
                log.info("server '%s': the sign-in listens on port %d", self.server_name, self.port)
                return
            if exc.errno == errno.EADDRINUSE:
                raise ListenerError(
                    f"Port {self.port} on 127.0.0.1 is in use, so the sign-in for server "
                    f"'{self.server_name}' cannot receive its redirect. Stop whatever uses it "
                    "or set oauth.callback_port (YAML: oauth.redirect_port) to another port."
                ) from exc
            raise ListenerError(
                f"Cannot listen on 127.0.0.1:{self.port} for server '{self.server_name}': "
                f"{exc.strerror}"
            ) from exc

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2)
            self._server = None

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
        except (TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            writer.close()
            return
        status, body = self._respond(head)
        try:
            writer.write(
                f"HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n"
                "Cache-Control: no-store\r\n\r\n".encode()
                + body
            )
            await writer.drain()
        except ConnectionError:
            pass
        finally:
            writer.close()

    def _respond(self, head: bytes) -> tuple[str, bytes]:
        line = head.split(b"\r\n", 1)[0].decode("latin-1")
        parts = line.split(" ")
        if len(parts) < 2 or parts[0] not in ("GET", "POST"):
            return "405 Method Not Allowed", _page("Not here", "This address only takes sign-ins.")
        target = urlparse(parts[1])
        if target.path != self.plan.path:
            return "404 Not Found", _page("Not found", "This address only takes sign-ins.")
        try:
            redirect = parse_redirect("?" + target.query, self.expected_state)
        except StateMismatch as exc:
            log.warning(
                "server '%s': ignored a sign-in callback that is not for this login (%s); "
                "still waiting",
                self.server_name,
                exc,
            )
            return "400 Bad Request", _page(
                "Not this sign-in",
                "This answer is not for the sign-in Portico is waiting for; it was ignored.",
            )
        except ProviderRefused as exc:
            if not self.result.done():
                self.result.set_exception(exc)
            return "200 OK", _page(
                "Sign-in ended",
                f"{exc} Portico did not sign in to '{self.server_name}'. You can close this tab.",
            )
        except PasteError as exc:
            return "400 Bad Request", _page(
                "Sign-in failed",
                f"Signing in to '{self.server_name}' did not work: {exc}. "
                "Return to Portico to try again.",
            )
        if not self.result.done():
            self.result.set_result(redirect)
        return "200 OK", _page(
            "Signed in",
            f"Portico is now signed in to '{self.server_name}'. You can close this tab.",
        )
