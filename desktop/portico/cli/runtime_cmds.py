"""``portico mcp list|test|tools|call``: the runtime seen from a terminal.

Every command loads the config, connects what it needs through a :class:`Hub` (so the
CLI sees exactly what the app would), prints, and shuts the servers down again.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from portico.cli.commands import Groups
from portico.cli.common import add_project_option, cli_services, err, find_server, load_config
from portico.cli.live import ask
from portico.runtime.rows import server_row, tools_listing
from portico.text import visible

if TYPE_CHECKING:
    from portico.config.model import Config, ServerSpec
    from portico.runtime.hub import Hub

LIST_BUDGET = 20.0  # seconds `mcp list` waits for servers before printing what it knows


def _live_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="say whether the running Portico answered or the command went direct",
    )
    parser.add_argument(
        "--direct",
        action="store_true",
        help="start the servers for this command even when Portico is running",
    )


def register(groups: Groups) -> None:
    mcp = groups.mcp

    p = mcp.add_parser("list", help="every server with status, transport, tools, source")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--budget", type=float, default=LIST_BUDGET, help="seconds to wait for servers")
    add_project_option(p)
    _live_options(p)
    p.set_defaults(handler=cmd_list)

    p = mcp.add_parser("test", help="connect one server and show what it offers")
    p.add_argument("name", nargs="?", help="server name from the config")
    p.add_argument("--url", help="test an HTTP endpoint that is not in the config")
    p.add_argument(
        "--header", action="append", default=[], metavar="K=V", help="HTTP header (repeat)"
    )
    p.add_argument("--sse", action="store_true", help="with --url: legacy SSE transport")
    add_project_option(p)
    _live_options(p)
    p.set_defaults(handler=cmd_test)

    p = mcp.add_parser("tools", help="the tools one server offers, as the model sees them")
    p.add_argument("name")
    p.add_argument("--json", action="store_true", help="print JSON")
    add_project_option(p)
    _live_options(p)
    p.set_defaults(handler=cmd_tools)

    p = mcp.add_parser("call", help="call one tool directly and print the processed result")
    p.add_argument("name")
    p.add_argument("tool", help="the tool's name on the server (or its qualified name)")
    p.add_argument("--args", default="{}", help="arguments as a JSON object")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    add_project_option(p)
    _live_options(p)
    p.set_defaults(handler=cmd_call)


def _config_with(config: Config, specs: tuple[ServerSpec, ...]) -> Config:
    return replace(config, servers=specs)


# --- mcp list ----------------------------------------------------------------------


def cmd_list(args: argparse.Namespace) -> int:
    config = load_config(args, report="all")
    live = ask(args, "GET", "list")
    if live is not None:
        return _print_list(live["servers"], live["summary"], args.json)
    return asyncio.run(_list(config, args.json, args.budget))


async def _list(config: Config, as_json: bool, budget: float) -> int:
    from portico.runtime.hub import Hub

    hooks = cli_services(config, ask_trust=False).hooks
    hub = Hub(hooks=hooks, wave_budget=budget, pass_budget=budget)
    await _ask_sandbox(config)
    progress = DiscoveryProgress([s.name for s in config.servers if s.enabled], sys.stderr)
    if sys.stderr.isatty() and not as_json:
        hub.bus.subscribe(progress.on_event)
    try:
        summary = await hub.apply(config)
        progress.finish()
        rows = [server_row(hub, spec) for spec in config.servers]
    finally:
        await hub.close()
    return _print_list(rows, summary, as_json)


async def _ask_sandbox(config: Config) -> None:
    """Find how this machine sandboxes before listing, when a server asks for it: the
    list says so for a server that has not started (awaiting trust, lazy) too."""
    from portico.runtime.sandbox.describe import wants_sandbox
    from portico.runtime.sandbox.probe import sandbox_method

    if any(wants_sandbox(spec) for spec in config.servers):
        await sandbox_method()


def _sandbox_cell(row: dict[str, Any]) -> str:
    badge, method = row["sandbox"] or "-", row.get("sandbox_method") or ""
    return f"{badge}/{method}" if method else badge


def _print_list(rows: list[dict[str, Any]], summary: str, as_json: bool) -> int:
    if as_json:
        print(json.dumps({"servers": rows, "summary": summary}, indent=2))
        return 0
    if not rows:
        print("No MCP servers configured. Add one with `portico mcp add`.")
        return 0
    headers = ("NAME", "STATUS", "TRANSPORT", "SANDBOX", "TOOLS", "SOURCE")
    table = [
        (r["name"], r["status"], r["transport"], _sandbox_cell(r), str(r["tools"]), r["source"])
        for r in rows
    ]
    widths = [max(len(h), *(len(t[i]) for t in table)) for i, h in enumerate(headers)]
    print("  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip())
    for r, t in zip(rows, table, strict=True):
        print("  ".join(c.ljust(w) for c, w in zip(t, widths, strict=True)).rstrip())
        if r["error"]:
            first, *rest = str(r["error"]).splitlines()
            print(visible(f"    error: {first}"))
            for line in rest:
                print(visible(f"           {line}"))
        if r["status"] == "Failed" and r["retry_at"]:
            print(f"    retries at {_clock(r['retry_at'])}")
    for note in dict.fromkeys(r["sandbox_why"] for r in rows if r.get("sandbox_why")):
        print(visible(f"sandbox: {note}"))
    print(summary)
    return 0


class DiscoveryProgress:
    """One self-updating line on a terminal while servers connect, fed by the hub's events."""

    SETTLED = frozenset(
        {
            "Running",
            "Failed",
            "Cooldown",
            "AwaitingTrust",
            "Rejected",
            "NeedsAuth",
            "Lazy",
            "Disabled",
        }
    )

    def __init__(self, names: list[str], stream: TextIO) -> None:
        self.pending = list(names)
        self.total = len(names)
        self.stream = stream
        self.shown = False

    def on_event(self, event: object) -> None:
        from portico.runtime.events import StatusChanged

        if not isinstance(event, StatusChanged):
            return
        state = event.state
        if str(state.status) in self.SETTLED and state.name in self.pending:
            self.pending.remove(state.name)
            self.line()

    def line(self) -> None:
        done = self.total - len(self.pending)
        waiting = ", ".join(self.pending[:3]) + (" …" if len(self.pending) > 3 else "")
        text = f"connecting: {done} of {self.total} settled"
        if self.pending:
            text += f" (waiting for {waiting})"
        self.stream.write("\r\033[K" + text)
        self.stream.flush()
        self.shown = True

    def finish(self) -> None:
        if self.shown:
            self.stream.write("\r\033[K")
            self.stream.flush()


def _clock(when: float) -> str:
    import time

    return time.strftime("%H:%M:%S", time.localtime(when))


# --- mcp test ----------------------------------------------------------------------


def cmd_test(args: argparse.Namespace) -> int:
    if bool(args.name) == bool(args.url):
        err("give either a server NAME or --url URL")
        return 2
    if args.url:
        spec = _adhoc_spec(args.url, args.header, args.sse)
        if spec is None:
            return 2
        config = None
    else:
        config = load_config(args, report="all")
        spec = find_server(config, args.name)
        if spec is None:
            return 2
        live = ask(args, "GET", f"test/{spec.name}")
        if live is not None:
            from portico.runtime.probe import ProbeResult, report_lines

            result = ProbeResult(**live)
            for line in report_lines(result):
                print(line)
            return result.exit_code
    return asyncio.run(_test(replace(spec, lazy=False), config))


def _adhoc_spec(url: str, header_args: list[str], sse: bool) -> ServerSpec | None:
    from portico.config.model import Dialect, Scope, ServerSpec, Source, Transport

    headers: list[tuple[str, str]] = []
    for item in header_args:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            err(f"--header {item!r}: write it as NAME=VALUE")
            return None
        headers.append((key.strip(), value))
    return ServerSpec(
        name="adhoc",
        source=Source(Path("<command line>"), 0, Scope.GLOBAL, Dialect.TOML),
        transport=Transport.SSE if sse else Transport.HTTP,
        url=url,
        headers=tuple(headers),
    )


async def _test(spec: ServerSpec, config: Config | None) -> int:
    from portico.runtime.probe import probe, report_lines

    result = await probe(spec, config, cli_services(config).hooks)
    for line in report_lines(result):
        print(line)
    return result.exit_code


# --- mcp tools / call --------------------------------------------------------------


async def _one_server(config: Config, spec: ServerSpec) -> tuple[Hub, bool]:
    from portico.runtime.hub import Hub

    hub = Hub(hooks=cli_services(config).hooks)
    await hub.apply(_config_with(config, (spec,)))
    return hub, _running(server_row(hub, spec))


def _running(row: dict[str, Any]) -> bool:
    """True when the row's server takes calls; else say why (once, on stderr)."""
    if row["status"] in ("Running", "Lazy"):
        return True
    when = f" (retries at {_clock(row['retry_at'])})" if row["retry_at"] else ""
    err(f"server {row['name']!r} is {row['status']}: {row['error'] or 'not running'}{when}")
    return False


def cmd_tools(args: argparse.Namespace) -> int:
    live = ask(args, "GET", f"tools/{args.name}")
    if live is not None:
        return _print_tools(live, args.json) if _running(live["state"]) else 1
    config = load_config(args, report="all")
    spec = find_server(config, args.name)
    if spec is None:
        return 2
    return asyncio.run(_tools(config, spec, args.json))


async def _tools(config: Config, spec: ServerSpec, as_json: bool) -> int:
    hub, ok = await _one_server(config, spec)
    try:
        return _print_tools(tools_listing(hub.registry, spec.name), as_json) if ok else 1
    finally:
        await hub.close()


def _print_tools(data: dict[str, Any], as_json: bool) -> int:
    if as_json:
        shown = {k: data[k] for k in ("server", "tools", "filtered_out", "warnings")}
        shown["tools"] = [{k: v for k, v in t.items() if k != "marks"} for t in data["tools"]]
        print(json.dumps(shown, indent=2))
        return 0
    for t in data["tools"]:
        description = t["description"].strip()
        first = description.splitlines()[0] if description else ""
        print(visible(f"{t['name']}  {t.get('marks', '')}{first}".rstrip()))
    for d in data["filtered_out"]:
        print(visible(f"(hidden) {d['tool']}: {d['reason']}"))
    for w in data["warnings"]:
        print(f"warning: {w}", file=sys.stderr)
    return 0


def view_note(uri: str, server: str, tool: str) -> str:
    """A result's MCP Apps view: the terminal shows the text the tool sent beside it, and
    says where the app shows the view."""
    name = tool.removeprefix(f"{server}__")
    return (
        f"note: this result comes with an interactive view ({uri}); "
        "the terminal shows the tool's text only. To see the view, open the Portico app: "
        f"Servers > {server} > Tools > {name} > Try it, or have a chat call {server}__{name}"
    )


def cmd_call(args: argparse.Namespace) -> int:
    try:
        arguments = json.loads(args.args)
    except ValueError as exc:
        err(f'--args is not valid JSON ({exc}); write e.g. --args \'{{"text": "hi"}}\'')
        return 2
    if not isinstance(arguments, dict):
        err('--args must be a JSON object, e.g. --args \'{"text": "hi"}\'')
        return 2
    body = {"tool": args.tool, "arguments": arguments}
    live = ask(args, "POST", f"call/{args.name}", body=body)
    if live is not None:
        return _print_live_call(args.name, args.tool, live, args.json)
    config = load_config(args, report="all")
    spec = find_server(config, args.name)
    if spec is None:
        return 2
    return asyncio.run(_call(config, spec, args.tool, arguments, args.json))


def _no_tool(server: str, tool: str, hidden: str | None) -> int:
    why = f" ({hidden})" if hidden else ""
    err(
        f"server {server!r} offers no tool {tool!r}{why}; "
        f"run `portico mcp tools {server}` to see its tools"
    )
    return 2


def _call_failed(server: str, tool: str, text: str) -> int:
    # Runtime errors already name the server and request: say them once.
    for prefix in (f"{server}: ", f"tools/call {tool}: "):
        text = text.removeprefix(prefix)
    err(f"{server}: calling {tool!r} failed: {text}")
    return 1


def _print_live_call(server: str, tool: str, live: dict[str, Any], as_json: bool) -> int:
    if not _running(live["state"]):
        return 1
    if live.get("missing"):
        return _no_tool(server, tool, live.get("hidden"))
    if live.get("failed"):
        return _call_failed(server, tool, str(live["failed"]))
    if as_json:
        print(json.dumps(live["json"], indent=2, ensure_ascii=False))
    else:
        print(live["text"])
    if live.get("view"):
        print(visible(view_note(str(live["view"]), server, tool)), file=sys.stderr)
    return 1 if live["is_error"] else 0


async def _call(
    config: Config, spec: ServerSpec, tool: str, arguments: dict[str, Any], as_json: bool
) -> int:
    from portico.prompts import Caller
    from portico.runtime.call_context import CallContext
    from portico.runtime.errors import describe

    hub, ok = await _one_server(config, spec)
    try:
        if not ok:
            return 1
        registry = hub.registry
        match = [t for t in registry.server_tools(spec.name) if tool in (t.tool, t.qualified)]
        if not match:
            hidden = [d for d in registry.filtered_out(spec.name) if d.tool == tool]
            return _no_tool(spec.name, tool, hidden[0].reason if hidden else None)
        try:
            context = CallContext(Caller("cli"))
            result = await registry.call(match[0].qualified, arguments, context=context)
        except Exception as exc:
            return _call_failed(spec.name, tool, describe(exc))
        if as_json:
            print(json.dumps(result.to_json(), indent=2, ensure_ascii=False))
        else:
            print(result.text())
        view = match[0].view
        if view is not None and view.resource_uri:
            print(visible(view_note(view.resource_uri, spec.name, match[0].tool)), file=sys.stderr)
        return 1 if result.is_error else 0
    finally:
        await hub.close()
