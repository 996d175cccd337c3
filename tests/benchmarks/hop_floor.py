"""The extra HTTP hop alone, for bench_cli_via_gateway.py: an ``echo`` answered at once,
no backend, served the way the endpoint serves (uvicorn on a pre-bound TCP_NODELAY
socket, loop="none", the same options). Prints its URL, then serves until killed.

Run: python tests/benchmarks/hop_floor.py sdk|raw
  sdk  the SDK's low-level Server and streamable_http_app (the endpoint's stack, without
       the access gate, guard or hub): what any SDK-built server pays for one call
  raw  a bare ASGI app answering the JSON-RPC body with a canned reply (no SDK on the
       server side): uvicorn + the SDK client, the hop's floor
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import sys
from collections.abc import Iterator
from typing import Any

import mcp_types as types
import uvicorn


class QuietServer(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


def sdk_app() -> Any:
    from mcp.server.lowlevel import Server
    from mcp.server.transport_security import TransportSecuritySettings

    tool = types.Tool(
        name="echo",
        description="echo",
        input_schema={"type": "object", "properties": {"text": {"type": "string"}}},
    )

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[tool])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        text = (params.arguments or {}).get("text", "")
        return types.CallToolResult(content=[types.TextContent(type="text", text=f"echo: {text}")])

    server: Server[Any] = Server(
        "floor",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        get_tool_input_schema=lambda name: tool.input_schema,
    )
    return server.streamable_http_app(
        streamable_http_path="/mcp",
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )


def _result(method: str, params: dict[str, Any]) -> dict[str, Any]:
    if method == "server/discover":
        found = types.DiscoverResult(
            supported_versions=["2026-07-28"],
            capabilities=types.ServerCapabilities(tools=types.ToolsCapability()),
            ttl_ms=0,
            cache_scope="public",
        )
        data = found.model_dump(by_alias=True, mode="json", exclude_none=True)
        data["serverInfo"] = {"name": "floor", "version": "0"}
        return data
    if method == "tools/list":
        listed = types.ListToolsResult(
            tools=[types.Tool(name="echo", input_schema={"type": "object"})],
            ttl_ms=0,
            cache_scope="public",
        )
        return listed.model_dump(by_alias=True, mode="json", exclude_none=True)
    if method == "tools/call":
        text = (params.get("arguments") or {}).get("text", "")
        return {"content": [{"type": "text", "text": f"echo: {text}"}], "resultType": "complete"}
    return {"resultType": "complete"}


async def raw_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        while (await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    request = json.loads(body or b"{}")
    reply = {
        "jsonrpc": "2.0",
        "id": request.get("id"),
        "result": _result(request.get("method", ""), request.get("params") or {}),
    }
    out = json.dumps(reply).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(out)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": out})


async def main(kind: str) -> None:
    tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    tcp.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    tcp.bind(("127.0.0.1", 0))
    tcp.listen(128)
    tcp.setblocking(False)
    app = sdk_app() if kind == "sdk" else raw_app
    config = uvicorn.Config(
        app, lifespan="on", log_level="warning", access_log=False, loop="none", ws="none"
    )
    server = QuietServer(config)
    task = asyncio.create_task(server.serve(sockets=[tcp]))
    while not server.started:  # noqa: ASYNC110 (uvicorn has no started event)
        await asyncio.sleep(0.01)
    print(f"http://127.0.0.1:{tcp.getsockname()[1]}/mcp", flush=True)
    await task


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
