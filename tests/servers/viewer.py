"""viewer: an MCP Apps test server (SDK ``mcp.server.apps``), over stdio.

Run: ``python tests/servers/viewer.py [--calls FILE]``. With ``--calls``, every tool call
the server runs is appended to FILE as one JSON line ``{"tool": ..., "arguments": ...}``,
so a test sees what arrived at the server, not what Portico says it sent.

Tools:
  show_weather(city)   view ui://viewer/weather; for the model and the view (the default)
  refresh(city)        view ui://viewer/weather, visibility ["app"]: for the view only
  forecast(city)       visibility ["model"]: for the model only
  apps_negotiated()    "yes" when the client advertised MCP Apps with its MIME type
                       (read-only: runs without an approval)
  plain()              no MCP Apps metadata at all
Resources:
  ui://viewer/weather  the view's HTML, with a CSP declaring one connect origin, one
                       resource origin and one smuggled directive (which a host must drop),
                       and a camera permission
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from mcp.server.apps import Apps, ResourceCsp, ResourcePermissions, client_supports_apps
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations

READ_ONLY = ToolAnnotations(read_only_hint=True)

HTML = """<!DOCTYPE html>
<html><head><title>Weather</title></head>
<body><h1 id="city">Weather</h1><p id="text">waiting for the tool result</p></body></html>
"""


def build(calls: Path | None) -> MCPServer:
    apps = Apps()

    def seen(tool: str, **arguments: Any) -> None:
        if calls is not None:
            with calls.open("a", encoding="utf-8") as out:
                out.write(json.dumps({"tool": tool, "arguments": arguments}) + "\n")

    @apps.tool(resource_uri="ui://viewer/weather", description="Weather in a city, with a view")
    def show_weather(city: str) -> dict[str, Any]:
        seen("show_weather", city=city)
        return {"city": city, "temperature": 21}

    @apps.tool(
        resource_uri="ui://viewer/weather",
        visibility=["app"],
        description="Refresh the weather view (for the view only)",
    )
    def refresh(city: str) -> str:
        seen("refresh", city=city)
        return f"refreshed {city}"

    apps.add_html_resource(
        "ui://viewer/weather",
        HTML,
        name="weather",
        csp=ResourceCsp(
            connect_domains=["https://api.weather.example", "https://x.example; script-src *"],
            resource_domains=["https://cdn.example"],
        ),
        permissions=ResourcePermissions(camera={}),
        prefers_border=True,
    )
    server = MCPServer("viewer", extensions=[apps])

    @server.tool(meta={"ui": {"visibility": ["model"]}}, description="Forecast, model only")
    def forecast(city: str) -> str:
        seen("forecast", city=city)
        return f"sunny in {city}"

    @server.tool(description="Did the client negotiate MCP Apps?", annotations=READ_ONLY)
    def apps_negotiated(ctx: Context) -> str:
        return "yes" if client_supports_apps(ctx) else "no"

    @server.tool(description="A tool without MCP Apps metadata")
    def plain() -> str:
        seen("plain")
        return "plain"

    return server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=Path, default=None)
    opts = parser.parse_args()
    build(opts.calls).run("stdio")


if __name__ == "__main__":
    main()
