"""chatty: an MCP test server that logs and whose resources change (runtime tests).

Run: ``python tests/servers/chatty.py stdio``

Tools (text results, structured_output=False):
  shout(text)    sends notifications/message at info ("said <text>") and warning
                 ("careful: <text>") with logger "chatty", then returns "shouted <text>"
  whisper(text)  sends a debug notification only (below the client's info threshold)
  bump()         changes the text of resource memo://counter and notifies subscribers
  levels()       the levels logging/setLevel asked for so far, comma-separated (it declares
                 the logging capability by handling logging/setLevel)
Resources:
  memo://counter  "count N"
"""

from __future__ import annotations

import warm_start  # noqa: F401  (first: tests/servers/warm_start.py)

# isort: split
import sys
from typing import Any

import mcp_types as types
from mcp.server import MCPServer
from mcp.server.mcpserver import Context


def build() -> MCPServer:
    server = MCPServer("chatty")
    state = {"count": 0}

    @server.tool(structured_output=False)
    async def shout(text: str, ctx: Context) -> str:
        """Log at info and warning, then answer."""
        await ctx.info(f"said {text}", logger_name="chatty")
        await ctx.warning(f"careful: {text}", logger_name="chatty")
        return f"shouted {text}"

    @server.tool(structured_output=False)
    async def whisper(text: str, ctx: Context) -> str:
        """Log at debug only."""
        await ctx.debug(f"psst {text}", logger_name="chatty")
        return f"whispered {text}"

    @server.resource("memo://counter")
    def counter() -> str:
        """A counter that bump() changes."""
        return f"count {state['count']}"

    subscribed: set[str] = set()  # handshake-era resources/subscribe

    async def on_subscribe(ctx: Any, params: types.SubscribeRequestParams) -> types.EmptyResult:
        subscribed.add(str(params.uri))
        return types.EmptyResult()

    async def on_unsubscribe(ctx: Any, params: types.UnsubscribeRequestParams) -> types.EmptyResult:
        subscribed.discard(str(params.uri))
        return types.EmptyResult()

    asked: list[str] = []  # logging/setLevel, in order

    async def on_set_level(ctx: Any, params: types.SetLevelRequestParams) -> types.EmptyResult:
        asked.append(str(params.level))
        return types.EmptyResult()

    @server.tool(structured_output=False)
    def levels() -> str:
        """The levels logging/setLevel asked for, in order."""
        return ",".join(asked)

    low = server._lowlevel_server
    low.add_request_handler("logging/setLevel", types.SetLevelRequestParams, on_set_level)
    low.add_request_handler("resources/subscribe", types.SubscribeRequestParams, on_subscribe)
    low.add_request_handler("resources/unsubscribe", types.UnsubscribeRequestParams, on_unsubscribe)

    @server.tool(structured_output=False)
    async def bump(ctx: Context) -> str:
        """Change memo://counter."""
        state["count"] += 1
        await ctx.notify_resource_updated("memo://counter")  # 2026 listen streams
        if "memo://counter" in subscribed:
            await ctx.session.send_resource_updated("memo://counter")
        return f"bumped to {state['count']}"

    return server


if __name__ == "__main__":
    build().run(sys.argv[1] if len(sys.argv) > 1 else "stdio")
