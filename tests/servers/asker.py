"""asker: an MCP test server that asks the client things (policy tests).

Run: ``python tests/servers/asker.py stdio|http [--port N] [--desc-file PATH]
[--allow-host NAME]`` (HTTP endpoint ``/mcp`` on 127.0.0.1; ``--allow-host`` accepts that
Host header too, for DNS-pinning tests that reach 127.0.0.1 under another name).
Use protocol ``legacy``: server-initiated requests need the legacy back-channel
(docs/platform-notes.md, "The mcp 2.3 client").

Tools (text results, structured_output=False):
  form()                  form elicitation: name (string, default "Ada", required),
                          age (integer 0..150, required), color (enum red|blue,
                          default "blue"), subscribe (boolean, default false);
                          returns JSON {"action": ..., "content": ...}
  multi()                 form elicitation with multi-selects: toppings (array of enum
                          cheese|ham|olives, default ["cheese"], maxItems 2) and sizes
                          (array of anyOf const s|m|l titled Small|Medium|Large,
                          default ["m"]); returns JSON {"action": ..., "content": ...}
  survey()                form elicitation of one string "answer", then progress 1/1
                          with message "answered <answer>"; returns the answer (a
                          call's progress after the client's answer)
  roots()                 roots/list; returns JSON {"roots": [uri, ...]} or {"error": message}
                          (also when the client declared no roots capability)
  link()                  URL elicitation of https://example.com/connect; returns the action
  gated()                 needs a URL elicitation first: until its page was visited it
                          answers error -32042 (URL elicitation required) naming
                          http://127.0.0.1:PORT/connect?id=gate-N, a page this process
                          serves; a visit (what the person's browser does) sends
                          notifications/elicitation/complete; then returns "gate opened"
  sample(prompt, max_tokens=100, model="", system="")
                          sampling/createMessage; returns JSON {"model", "text"} or
                          {"error": message}
  mutable()               its description is the text of --desc-file at start-up
                          (so a restart after editing the file changes the contract)
  status()                annotated readOnlyHint: true; returns "all good"
  write_note(text, priority)  not read-only; returns "noted <text> <priority>"
  render(prompt)          returns "rendered <prompt>" (tests give it a cost)
  animate(frames=1)       returns "animated <frames>" (tests give it a cost range)
  count()                 returns how many times any tool ran in this process
  roots_changes()         how many notifications/roots/list_changed arrived so far
"""

from __future__ import annotations

import warm_start  # noqa: F401  (first: tests/servers/warm_start.py)

# isort: split
import argparse
import asyncio
import json
from pathlib import Path
from typing import Any

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.shared.exceptions import UrlElicitationRequiredError
from mcp_types import (
    ElicitRequestURLParams,
    ModelHint,
    ModelPreferences,
    NotificationParams,
    SamplingMessage,
    TextContent,
    ToolAnnotations,
)

FORM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name", "default": "Ada"},
        "age": {"type": "integer", "title": "Age", "minimum": 0, "maximum": 150},
        "color": {"type": "string", "title": "Color", "enum": ["red", "blue"], "default": "blue"},
        "subscribe": {"type": "boolean", "title": "Subscribe", "default": False},
    },
    "required": ["name", "age"],
}

MULTI_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "toppings": {
            "type": "array",
            "title": "Toppings",
            "items": {"type": "string", "enum": ["cheese", "ham", "olives"]},
            "default": ["cheese"],
            "maxItems": 2,
        },
        "sizes": {
            "type": "array",
            "title": "Sizes",
            "items": {
                "anyOf": [
                    {"const": "s", "title": "Small"},
                    {"const": "m", "title": "Medium"},
                    {"const": "l", "title": "Large"},
                ]
            },
            "default": ["m"],
        },
    },
}


def build(desc: str) -> MCPServer:
    server = MCPServer("asker")
    runs = {"n": 0}

    def ran() -> None:
        runs["n"] += 1

    @server.tool(structured_output=False)
    async def form(ctx: Context) -> str:
        """Ask the person for a small form."""
        ran()
        result = await ctx.request_context.session.elicit_form(
            "Tell me about you", FORM_SCHEMA, related_request_id=ctx.request_id
        )
        return json.dumps({"action": result.action, "content": result.content})

    @server.tool(structured_output=False)
    async def multi(ctx: Context) -> str:
        """Ask the person to pick several things."""
        ran()
        result = await ctx.request_context.session.elicit_form(
            "Build your pizza", MULTI_SCHEMA, related_request_id=ctx.request_id
        )
        return json.dumps({"action": result.action, "content": result.content})

    @server.tool(structured_output=False)
    async def survey(ctx: Context) -> str:
        """Ask one question, then report progress."""
        ran()
        schema = {"type": "object", "properties": {"answer": {"type": "string"}}}
        result = await ctx.request_context.session.elicit_form(
            "One question", schema, related_request_id=ctx.request_id
        )
        answer = str((result.content or {}).get("answer", ""))
        await ctx.report_progress(1, 1, f"answered {answer}")
        return answer

    @server.tool(structured_output=False)
    async def roots(ctx: Context) -> str:
        """Ask the client for its roots."""
        ran()
        session = ctx.request_context.session
        caps = session.client_params.capabilities if session.client_params else None
        if caps is None or caps.roots is None:
            return json.dumps({"error": "the client declared no roots capability"})
        try:
            result = await session.list_roots()
        except Exception as exc:
            return json.dumps({"error": str(exc)})
        return json.dumps({"roots": [str(r.uri) for r in result.roots]})

    @server.tool(structured_output=False)
    async def link(ctx: Context, url: str = "https://example.com/connect") -> str:
        """Ask the person to open a URL."""
        ran()
        result = await ctx.elicit_url("Please connect your account", url, "e1")
        return str(result.action)

    gate: dict[str, Any] = {"open": False, "port": None, "asked": 0}

    async def serve_page(session: Any) -> int:
        """The page the URL names: a visit opens the gate and says so to the client."""

        async def visit(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            line = (await reader.readline()).decode("latin-1")
            while (await reader.readline()) not in (b"\r\n", b""):
                pass
            target = line.split(" ")[1] if " " in line else ""
            writer.write(
                b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\nConnection: close\r\n\r\nconnected"
            )
            await writer.drain()
            writer.close()
            if "id=" in target and not gate["open"]:
                gate["open"] = True
                await session.send_elicit_complete(target.split("id=", 1)[1])

        listener = await asyncio.start_server(visit, "127.0.0.1", 0)
        gate["listener"] = listener  # kept alive for the process
        return int(listener.sockets[0].getsockname()[1])

    @server.tool(structured_output=False)
    async def gated(ctx: Context) -> str:
        """Needs the person to connect an account on a web page first."""
        ran()
        if gate["open"]:
            return "gate opened"
        if gate["port"] is None:
            gate["port"] = await serve_page(ctx.request_context.session)
        gate["asked"] += 1
        elicitation_id = f"gate-{gate['asked']}"
        raise UrlElicitationRequiredError(
            [
                ElicitRequestURLParams(
                    message="Connect your account to open the gate",
                    url=f"http://127.0.0.1:{gate['port']}/connect?id={elicitation_id}",
                    elicitation_id=elicitation_id,
                )
            ]
        )

    @server.tool(structured_output=False)
    async def sample(
        prompt: str, ctx: Context, max_tokens: int = 100, model: str = "", system: str = ""
    ) -> str:
        """Ask the client's model."""
        ran()
        prefs = ModelPreferences(hints=[ModelHint(name=model)]) if model else None
        try:
            result = await ctx.request_context.session.create_message(
                [SamplingMessage(role="user", content=TextContent(type="text", text=prompt))],
                max_tokens=max_tokens,
                system_prompt=system or None,
                model_preferences=prefs,
                related_request_id=ctx.request_id,
            )
        except Exception as exc:
            return json.dumps({"error": str(exc)})
        text = getattr(result.content, "text", "")
        return json.dumps({"model": result.model, "text": text})

    @server.tool(structured_output=False, description=desc)
    def mutable() -> str:
        ran()
        return "mutable ran"

    @server.tool(structured_output=False, annotations=ToolAnnotations(read_only_hint=True))
    def status() -> str:
        """Read-only status."""
        ran()
        return "all good"

    @server.tool(structured_output=False)
    def write_note(text: str, priority: int) -> str:
        """Write a note."""
        ran()
        return f"noted {text} {priority}"

    @server.tool(structured_output=False)
    def render(prompt: str) -> str:
        """Render an image (costly)."""
        ran()
        return f"rendered {prompt}"

    @server.tool(structured_output=False)
    def animate(frames: int = 1) -> str:
        """Animate (costly)."""
        ran()
        return f"animated {frames}"

    @server.tool(structured_output=False, annotations=ToolAnnotations(read_only_hint=True))
    def count() -> str:
        """How many tool runs so far."""
        return str(runs["n"])

    changes = {"n": 0}

    async def on_roots_changed(ctx: Any, params: Any) -> None:
        changes["n"] += 1

    server._lowlevel_server.add_notification_handler(
        "notifications/roots/list_changed", NotificationParams, on_roots_changed
    )

    @server.tool(structured_output=False, annotations=ToolAnnotations(read_only_hint=True))
    def roots_changes() -> str:
        """How many roots list_changed notifications arrived."""
        return str(changes["n"])

    return server


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("transport", choices=["stdio", "http"])
    parser.add_argument("--port", type=int, default=8766)
    parser.add_argument("--desc-file", type=Path)
    parser.add_argument(
        "--allow-host", action="append", default=[], help="extra Host header to accept (http)"
    )
    args = parser.parse_args(argv)
    desc = args.desc_file.read_text().strip() if args.desc_file else "A tool that may change."
    server = build(desc)
    if args.transport == "stdio":
        server.run("stdio")
    else:
        from mcp.server.transport_security import TransportSecuritySettings

        hosts = ["127.0.0.1:*", "localhost:*", *(f"{h}:*" for h in args.allow_host)]
        security = TransportSecuritySettings(allowed_hosts=hosts, allowed_origins=[])
        server.run("streamable-http", host="127.0.0.1", port=args.port, transport_security=security)


if __name__ == "__main__":
    main()
