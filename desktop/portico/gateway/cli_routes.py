"""What ``portico mcp list|tools|call|test`` ask of a running endpoint: plain JSON routes
under :data:`PREFIX`, open only to the CLI's own token (the one in the discovery file).

They answer from the live hub with the same rows the commands build from a hub of their
own (``runtime/rows.py``, ``runtime/probe.py``), so the output is the same either way. A
call here is the person's own command, as ``portico mcp call`` is without a running app:
it goes to the registry as the direct path does (caller ``portico mcp call``). Every
route takes the command's ``config`` stamp (``discovery.config_stamp``: its project's
config files as they are now); when it is not the stamp of what the running Portico
loaded (another project, an edit not loaded yet) the route answers 409 and the command
goes direct.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from portico.gateway.access import client_of
from portico.gateway.discovery import CLI_CLIENT, CLI_PREFIX
from portico.prompts import Caller
from portico.runtime.call_context import CallContext
from portico.runtime.errors import describe
from portico.runtime.rows import server_row, tools_listing

if TYPE_CHECKING:
    from portico.runtime.connection import Connection
    from portico.runtime.hub import Hub

PREFIX = CLI_PREFIX
SETTLE = 30.0  # seconds a command waits for a server still connecting


def _refuse(status: int, text: str) -> JSONResponse:
    return JSONResponse({"error": text}, status_code=status)


class CliRoutes:
    def __init__(self, hub: Hub, stamp: Callable[[], str | None]) -> None:
        self.hub = hub
        self.stamp = stamp  # the config stamp of what the hub runs (None: not loaded yet)

    def routes(self) -> list[Route]:
        return [
            Route(f"{PREFIX}/list", self.list, methods=["GET"]),
            Route(f"{PREFIX}/tools/{{server}}", self.tools, methods=["GET"]),
            Route(f"{PREFIX}/test/{{server}}", self.test, methods=["GET"]),
            Route(f"{PREFIX}/call/{{server}}", self.call, methods=["POST"]),
        ]

    def _refusal(self, request: Request) -> JSONResponse | None:
        client = client_of(request)
        if client is None or not client.ephemeral or client.name != CLI_CLIENT:
            return _refuse(403, "only the CLI's own token may use these routes")
        if request.query_params.get("config") != self.stamp():
            return _refuse(
                409,
                "the running Portico has not loaded this config (another project, or an "
                "edit it has not read yet)",
            )
        return None

    async def _server(self, request: Request) -> Connection | JSONResponse:
        refusal = self._refusal(request)
        if refusal is not None:
            return refusal
        name = request.path_params["server"]
        conn = self.hub.connections.get(name)
        if conn is None:
            return _refuse(404, f"the running Portico has no server named {name!r}")
        with contextlib.suppress(TimeoutError, asyncio.TimeoutError):
            await asyncio.wait_for(conn.wait_settled(SETTLE), SETTLE + 1.0)
        return conn

    async def list(self, request: Request) -> JSONResponse:
        refusal = self._refusal(request)
        if refusal is not None:
            return refusal
        specs = [self.hub.connections[s.name].spec for s in self.hub.states()]
        return JSONResponse(
            {
                "servers": [server_row(self.hub, spec) for spec in specs],
                "summary": self.hub.summary_line(),
            }
        )

    async def tools(self, request: Request) -> JSONResponse:
        conn = await self._server(request)
        if isinstance(conn, JSONResponse):
            return conn
        return JSONResponse(
            {
                "state": server_row(self.hub, conn.spec),
                **tools_listing(self.hub.registry, conn.name),
            }
        )

    async def test(self, request: Request) -> JSONResponse:
        from portico.runtime.probe import describe_connection

        conn = await self._server(request)
        if isinstance(conn, JSONResponse):
            return conn
        result = await describe_connection(self.hub, conn.name)
        return JSONResponse(dataclasses.asdict(result))

    async def call(self, request: Request) -> JSONResponse:
        conn = await self._server(request)
        if isinstance(conn, JSONResponse):
            return conn
        try:
            body: Any = await request.json()
        except ValueError:
            return _refuse(400, "the body is not JSON")
        if not isinstance(body, dict) or not isinstance(body.get("tool"), str):
            return _refuse(400, "the body needs 'tool' (and 'arguments')")
        registry = self.hub.registry
        tool = body["tool"]
        match = [t for t in registry.server_tools(conn.name) if tool in (t.tool, t.qualified)]
        if not match:
            hidden = [d for d in registry.filtered_out(conn.name) if d.tool == tool]
            return JSONResponse(
                {
                    "state": server_row(self.hub, conn.spec),
                    "missing": True,
                    "hidden": hidden[0].reason if hidden else None,
                }
            )
        arguments = body.get("arguments") or {}
        try:
            result = await registry.call(
                match[0].qualified, arguments, context=CallContext(Caller("cli"))
            )
        except Exception as exc:
            return JSONResponse({"state": server_row(self.hub, conn.spec), "failed": describe(exc)})
        return JSONResponse(
            {
                "state": server_row(self.hub, conn.spec),
                "json": result.to_json(),
                "text": result.text(),
                "is_error": result.is_error,
                "view": match[0].view.resource_uri if match[0].view else None,
            }
        )
