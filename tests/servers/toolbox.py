"""toolbox: one MCP test server for the runtime, hub and policy tests.

Run: ``python tests/servers/toolbox.py stdio|http|sse [--port N] [options]``
(HTTP endpoint ``/mcp``, SSE endpoint ``/sse``, always on 127.0.0.1).

Options:
  --port N              port for http/sse (default 8765)
  --name NAME           server name reported in initialize (default "toolbox")
  --stderr-lines N      write N lines "toolbox stderr line i" to stderr at start
  --exit-at-start CODE  write "toolbox exiting at start" to stderr and exit with CODE
  --start-delay S       sleep S seconds before serving (slow start, connect_timeout tests)
  --pid-file PATH       write the process id there at start
  --stdout-banner TEXT  print TEXT to stdout before serving (a misbehaving stdio server)
  --json-response       http: answer POSTs with application/json instead of an SSE stream
  --tls-cert/--tls-key PATH   http: serve HTTPS with this certificate and key
  --tls-client-ca PATH  http: with --tls-cert, require a client certificate signed by this CA
  --slow-list S         answer each tools/list S seconds late (a refresh that takes a while)
  --linger S            stdio: stay S seconds after stdin ends (a server slow to exit)
  --extra               start with the optional tool "extra" (as after one flip())

Tools (text tools use structured_output=False, so text is sent once):
  echo(text)                     -> text "echo: <text>"
  add(a, b)                      -> text of a + b
  sleep(seconds, steps=0)        sleeps; with steps > 0 reports progress steps times
                                 (progress i/steps, message "step i") spread over seconds
  crash(code=3, message="...")   writes message to stderr, then os._exit(code)
  hang()                         never returns; writes "hang started" to stderr, then
                                 "hang cancelled" when the client cancels the call
  flip()                         toggles the optional tool "extra" (adds/removes it) and
                                 sends tools/list_changed; returns "extra on|off"
  image()                        one 2x2 PNG ImageContent + a text part
  tags()                         text with hidden TAG characters (U+E0041.. "HIDDEN") and a
                                 valid emoji tag sequence (England flag: U+1F3F4 + tags +
                                 U+E007F); the exact strings are the constants below
  meta()                         result with _meta holding reserved keys
                                 ("modelcontextprotocol.io/x", "tools.mcp.com/y") and
                                 unreserved ones ("example.com/z", "plain")
  big(mib=10)                    text of mib MiB ("x" * n)
  stderr(text, lines=1)          writes lines to stderr, returns "ok"
  pid()                          the process id as text
  cwd()                          the process's working folder (os.getcwd())
  burst(n=5)                     sends n tools/list_changed notifications in a row (both
                                 the legacy notification and the 2026 listen event)
  list_count()                   how many tools/list requests the server has started
  hold_lists() / release_lists() tools/list requests wait (are held in flight) until
                                 release_lists() is called
  more_prompts()                 adds a prompt "extra_prompt_<k>" (k = 1, 2...) and sends
                                 prompts/list_changed; returns the new prompt's name
  more_resources()               adds a resource "toolbox://extra/<k>" and sends
                                 resources/list_changed; returns the new resource's URI
  expire_sessions(delay=0.3)     http: after delay seconds, forgets every Streamable HTTP
                                 session (their ids then answer 404), as a server does
                                 that expires sessions; returns at once
Prompts: greet(name). Resources: toolbox://readme (text).
"""

from __future__ import annotations

import warm_start  # noqa: F401  (first: tests/servers/warm_start.py)

# isort: split
import argparse
import asyncio
import base64
import os
import sys
import time
from typing import Any

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult, ImageContent, TextContent

HIDDEN = "".join(chr(0xE0000 + ord(c)) for c in "HIDDEN")
ENGLAND_FLAG = "\U0001f3f4" + "".join(chr(0xE0000 + ord(c)) for c in "gbeng") + "\U000e007f"
TAGS_TEXT = f"visible{HIDDEN} text {ENGLAND_FLAG}"
PNG_2X2 = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000002000000020802000000fdd49a73"
        "0000001649444154789c63f8cfc0f01f0418181818fe0300220e03fd4b3c6d2d"
        "0000000049454e44ae426082"
    )
).decode()


def build(name: str, slow_list: float = 0.0, extra_tool: bool = False) -> MCPServer:
    server = MCPServer(name, instructions="A test server for Portico.")
    state: dict[str, Any] = {"extra": False}

    @server.tool(structured_output=False)
    def echo(text: str) -> str:
        """Echo the text back."""
        return f"echo: {text}"

    @server.tool(structured_output=False)
    def add(a: int, b: int) -> str:
        """Add two integers."""
        return str(a + b)

    @server.tool(structured_output=False)
    async def sleep(seconds: float, ctx: Context, steps: int = 0) -> str:
        """Sleep, optionally reporting progress."""
        if steps <= 0:
            await asyncio.sleep(seconds)
        else:
            for i in range(1, steps + 1):
                await asyncio.sleep(seconds / steps)
                await ctx.report_progress(i, steps, f"step {i}")
        return f"slept {seconds}"

    @server.tool(structured_output=False)
    def crash(code: int = 3, message: str = "toolbox crashing now") -> str:
        """Exit the process at once."""
        sys.stderr.write(message + "\n")
        sys.stderr.flush()
        os._exit(code)

    @server.tool(structured_output=False)
    async def hang() -> str:
        """Never return: writes "hang started" to stderr once running, "hang cancelled"
        when the client cancels (tests wait for the first instead of sleeping)."""
        sys.stderr.write("hang started\n")
        sys.stderr.flush()
        try:
            await asyncio.Event().wait()
        except BaseException:
            sys.stderr.write("hang cancelled\n")
            sys.stderr.flush()
            raise
        return "unreachable"

    def extra() -> str:
        return "extra tool"

    if extra_tool:
        server.add_tool(
            extra, name="extra", description="Appears after flip.", structured_output=False
        )
        state["extra"] = True

    @server.tool(structured_output=False)
    async def flip(ctx: Context) -> str:
        """Add or remove the tool 'extra' and announce the change."""
        if state["extra"]:
            server.remove_tool("extra")
        else:
            server.add_tool(
                extra, name="extra", description="Appears after flip.", structured_output=False
            )
        state["extra"] = not state["extra"]
        try:
            await ctx.session.send_tool_list_changed()
        except Exception as exc:  # 2026 sessions have no legacy notification channel
            sys.stderr.write(f"legacy list_changed not sent: {exc!r}\n")
        try:
            await ctx.notify_tools_changed()
        except Exception as exc:
            sys.stderr.write(f"listen event not sent: {exc!r}\n")
        return "extra on" if state["extra"] else "extra off"

    @server.tool()
    def image() -> list[ImageContent | TextContent]:
        """A tiny PNG."""
        return [
            ImageContent(type="image", data=PNG_2X2, mime_type="image/png"),
            TextContent(type="text", text="a 2x2 image"),
        ]

    @server.tool(structured_output=False)
    def tags() -> str:
        """Text with TAG characters."""
        return TAGS_TEXT

    @server.tool()
    def meta() -> CallToolResult:
        """A result with _meta."""
        return CallToolResult(
            content=[TextContent(type="text", text="with meta")],
            _meta={
                "modelcontextprotocol.io/x": 1,
                "tools.mcp.com/y": 2,
                "example.com/z": 3,
                "plain": "kept",
            },
        )

    @server.tool(structured_output=False)
    def big(mib: float = 10) -> str:
        """mib MiB of text."""
        return "x" * int(mib * 1024 * 1024)

    @server.tool(structured_output=False)
    def stderr(text: str, lines: int = 1) -> str:
        """Write lines to stderr."""
        for i in range(lines):
            sys.stderr.write(f"{text} {i}\n")
        sys.stderr.flush()
        return "ok"

    @server.tool(structured_output=False)
    def pid() -> str:
        """The process id."""
        return str(os.getpid())

    @server.tool(structured_output=False)
    def cwd() -> str:
        """The working folder of the process."""
        return os.getcwd()

    counted = {"lists": 0}
    list_tools = server.list_tools
    lists_open = asyncio.Event()
    lists_open.set()

    async def counting_list_tools() -> Any:
        counted["lists"] += 1
        await lists_open.wait()
        if slow_list:
            await asyncio.sleep(slow_list)
        return await list_tools()

    server.list_tools = counting_list_tools  # type: ignore[method-assign]

    async def announce(ctx: Context, kind: str) -> None:
        """Send one list_changed of ``kind`` over both channels (legacy and 2026 listen)."""
        legacy = getattr(ctx.session, f"send_{kind}_list_changed")
        modern = getattr(ctx, f"notify_{kind}s_changed")
        for send, what in ((legacy, "legacy list_changed"), (modern, "listen event")):
            try:
                await send()
            except Exception as exc:  # each session kind has only one of the channels
                sys.stderr.write(f"{what} not sent: {exc!r}\n")

    @server.tool(structured_output=False)
    async def burst(ctx: Context, n: int = 5) -> str:
        """Send n tools/list_changed notifications in a row."""
        for _ in range(n):
            await announce(ctx, "tool")
        return f"sent {n}"

    @server.tool(structured_output=False)
    def list_count() -> str:
        """How many tools/list requests were started."""
        return str(counted["lists"])

    @server.tool(structured_output=False)
    def hold_lists() -> str:
        """tools/list requests from now on wait for release_lists()."""
        lists_open.clear()
        return "held"

    @server.tool(structured_output=False)
    def release_lists() -> str:
        """Let held tools/list requests (and later ones) through."""
        lists_open.set()
        return "released"

    @server.tool(structured_output=False)
    async def more_prompts(ctx: Context) -> str:
        """Add a prompt and announce it."""
        from mcp.server.mcpserver.prompts.base import Prompt

        state["prompts"] = state.get("prompts", 0) + 1
        name = f"extra_prompt_{state['prompts']}"
        server.add_prompt(Prompt.from_function(lambda: "extra", name=name))
        await announce(ctx, "prompt")
        return name

    @server.tool(structured_output=False)
    async def more_resources(ctx: Context) -> str:
        """Add a resource and announce it."""
        from mcp.server.mcpserver.resources.types import TextResource

        state["resources"] = state.get("resources", 0) + 1
        uri = f"toolbox://extra/{state['resources']}"
        server.add_resource(TextResource(uri=uri, name=f"extra{state['resources']}", text="x"))
        await announce(ctx, "resource")
        return uri

    expiring: set[asyncio.Task[None]] = set()

    @server.tool(structured_output=False)
    async def expire_sessions(delay: float = 0.3) -> str:
        """Forget every session after delay seconds (a server that expires them)."""

        async def expire() -> None:
            await asyncio.sleep(delay)
            manager = server.session_manager
            for session_id, transport in list(manager._server_instances.items()):
                await manager._discard_session(session_id, transport)

        task = asyncio.get_running_loop().create_task(expire())
        expiring.add(task)
        task.add_done_callback(expiring.discard)
        return "expiring"

    @server.prompt()
    def greet(name: str) -> str:
        """Greet someone."""
        return f"Hello, {name}!"

    @server.resource("toolbox://readme")
    def readme() -> str:
        """The readme."""
        return "toolbox readme"

    return server


def serve_https(server: MCPServer, opts: argparse.Namespace) -> None:
    """Streamable HTTP over TLS (uvicorn), optionally requiring a client certificate."""
    import ssl

    import uvicorn

    app = server.streamable_http_app(json_response=opts.json_response, host="127.0.0.1")
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=opts.port,
        log_level="warning",
        ssl_certfile=opts.tls_cert,
        ssl_keyfile=opts.tls_key,
        ssl_ca_certs=opts.tls_client_ca,
        ssl_cert_reqs=ssl.CERT_REQUIRED if opts.tls_client_ca else ssl.CERT_NONE,
    )
    uvicorn.Server(config).run()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("transport", choices=["stdio", "http", "sse"])
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--name", default="toolbox")
    parser.add_argument("--stderr-lines", type=int, default=0)
    parser.add_argument("--exit-at-start", type=int, default=None)
    parser.add_argument("--start-delay", type=float, default=0.0)
    parser.add_argument("--pid-file", default=None)
    parser.add_argument("--stdout-banner", default=None)
    parser.add_argument("--json-response", action="store_true")
    parser.add_argument("--tls-cert", default=None)
    parser.add_argument("--slow-list", type=float, default=0.0)
    parser.add_argument("--tls-key", default=None)
    parser.add_argument("--tls-client-ca", default=None)
    parser.add_argument("--linger", type=float, default=0.0)
    parser.add_argument("--extra", action="store_true")
    opts = parser.parse_args()
    if opts.pid_file:
        with open(opts.pid_file, "w") as fh:
            fh.write(str(os.getpid()))
    for i in range(opts.stderr_lines):
        sys.stderr.write(f"toolbox stderr line {i}\n")
    sys.stderr.flush()
    if opts.exit_at_start is not None:
        sys.stderr.write("toolbox exiting at start\n")
        sys.stderr.flush()
        os._exit(opts.exit_at_start)
    if opts.start_delay:
        time.sleep(opts.start_delay)
    if opts.stdout_banner:
        print(opts.stdout_banner, flush=True)
    server = build(opts.name, slow_list=opts.slow_list, extra_tool=opts.extra)
    if opts.transport == "stdio":
        server.run("stdio")
        time.sleep(opts.linger)
    elif opts.transport == "http" and opts.tls_cert:
        serve_https(server, opts)
    elif opts.transport == "http":
        server.run(
            "streamable-http", host="127.0.0.1", port=opts.port, json_response=opts.json_response
        )
    else:
        server.run("sse", host="127.0.0.1", port=opts.port)


if __name__ == "__main__":
    main()
