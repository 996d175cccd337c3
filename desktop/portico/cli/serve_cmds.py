"""``portico serve`` (the local endpoint without the app) and ``portico clients`` (the
clients that may use it, each with its own token)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from portico.cli.commands import Groups
from portico.cli.common import (
    CommandError,
    add_project_option,
    async_command,
    cli_secrets,
    cli_services,
    load_config,
)

if TYPE_CHECKING:
    from portico.config.model import Config
    from portico.gateway.endpoint import Endpoint
    from portico.runtime.hub import Hub
    from portico.runtime.watcher import ConfigWatcher
    from portico.services import Services


def register(groups: Groups) -> None:
    p = groups.top.add_parser(
        "serve",
        help="serve your MCP servers to other MCP clients and the CLI on 127.0.0.1 (no app)",
        description="Start your servers as the app does and serve them as one MCP endpoint "
        "(Streamable HTTP) on 127.0.0.1; the first line printed is its URL. Every call "
        "passes your approvals; each client needs its own token (`portico clients add`).",
    )
    p.add_argument(
        "--port", type=int, default=None, help="port (default: endpoint.port, else any free one)"
    )
    p.add_argument("--no-socket", action="store_true", help="do not also listen on a Unix socket")
    add_project_option(p)
    p.set_defaults(handler=async_command(_serve))

    clients = groups.top.add_parser(
        "clients", help="the MCP clients that may use the local endpoint"
    )
    sub = clients.add_subparsers(dest="clients_command", metavar="SUBCOMMAND", required=True)
    p = sub.add_parser("add", help="give a client a new token (printed once)")
    p.add_argument("name", help="the client's name, e.g. claude-code")
    p.add_argument(
        "--origin",
        action="append",
        default=[],
        metavar="URL",
        help="an Origin header this client may send (a browser-based client; repeat)",
    )
    p.set_defaults(handler=async_command(_clients_add))
    p = sub.add_parser(
        "profile",
        help="limit which servers and tools a client sees (no options: everything again)",
        description="A client's profile limits what it sees and may call: a hidden tool, "
        "prompt or resource is refused as if it did not exist.",
    )
    p.add_argument("name")
    p.add_argument(
        "--server",
        action="append",
        default=None,
        metavar="NAME",
        help="a server the client sees (repeat; default: all)",
    )
    p.add_argument(
        "--tool",
        action="append",
        default=[],
        metavar="PATTERN",
        help="a server__tool name or glob the client sees, e.g. 'github__get_*' (repeat)",
    )
    p.set_defaults(handler=async_command(_clients_profile))
    p = sub.add_parser("list", help="the clients that have a token")
    p.set_defaults(handler=async_command(_clients_list))
    p = sub.add_parser("remove", help="revoke a client's token")
    p.add_argument("name")
    p.set_defaults(handler=async_command(_clients_remove))


async def _serve(args: argparse.Namespace) -> int:
    from portico.cli.common import project_of
    from portico.gateway.discovery import config_stamp
    from portico.gateway.endpoint import EndpointError
    from portico.gateway.run import running_endpoint

    project = project_of(args)
    stamp = config_stamp(project)  # before reading: a later edit is not in it
    config = load_config(args, report="all")
    services = cli_services(config)
    hub = services.start_hub()
    ready = asyncio.Event()  # set when the first apply is done
    serving: list[Endpoint] = []
    # Watching starts now, not after the first apply (seconds later): an edit made
    # meanwhile must count as a change.
    watcher = _watch(project, config, services, hub, (ready, serving))
    port = args.port if args.port is not None else config.settings.endpoint_port
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    try:
        async with running_endpoint(
            hub,
            services.guard,
            services.secrets,
            port=port,
            unix_socket=not args.no_socket,
            policy=services.policy,
        ) as endpoint:
            endpoint.config_stamp = stamp
            print(f"Portico endpoint: {endpoint.url}", flush=True)
            if endpoint.unix_path is not None:
                print(f"socket: {endpoint.unix_path}", flush=True)
            elif not args.no_socket:
                print(
                    "socket: none (no Unix sockets here, or the state folder's path is "
                    "too long for one); clients use the URL",
                    flush=True,
                )
            print(await hub.apply(config), flush=True)
            serving.append(endpoint)
            ready.set()
            await stop.wait()
            print("stopping", file=sys.stderr, flush=True)
    except EndpointError as exc:
        raise CommandError(str(exc)) from exc
    finally:
        await watcher.stop()
        await hub.close()
    return 0


def _watch(
    project: Path,
    config: Config,
    services: Services,
    hub: Hub,
    started: tuple[asyncio.Event, list[Endpoint]],
) -> ConfigWatcher:
    """Follow edits of the config files as the app does: the hub reconciles, and the
    CLI routes answer for the new files (their stamp is taken before each read)."""
    from portico.config import load
    from portico.gateway.discovery import config_stamp
    from portico.runtime.watcher import ConfigWatcher

    read: list[str] = []

    def loader(where: Path | None) -> Config:
        read.append(config_stamp(where))
        return load(where)

    async def apply(fresh: Config) -> None:
        ready, serving = started
        await ready.wait()  # the first apply is still running
        services.configure(fresh)
        print(await hub.apply(fresh), flush=True)
        serving[0].config_stamp = read[-1] if read else None

    watcher = ConfigWatcher(apply, project=project, loader=loader, previous=config)
    watcher.start()
    return watcher


async def _clients_add(args: argparse.Namespace) -> int:
    from portico.gateway.clients import ClientBook, ClientError

    book = ClientBook(cli_secrets(load_config(args)))
    try:
        token = await book.add(args.name, tuple(args.origin))
    except ClientError as exc:
        raise CommandError(str(exc), code=2) from exc
    print(token)
    print(
        f"This is {args.name}'s token for the local endpoint; it is shown only now. Send it "
        "as 'Authorization: Bearer TOKEN'.",
        file=sys.stderr,
    )
    return 0


async def _clients_list(args: argparse.Namespace) -> int:
    import time

    from portico.gateway.clients import ClientBook, ClientError

    book = ClientBook(cli_secrets(load_config(args)))
    try:
        await book.load()
    except ClientError as exc:
        raise CommandError(str(exc)) from exc
    listed = book.clients()
    if not listed:
        print("No clients yet. Add one with `portico clients add NAME`.")
        return 0
    for client in listed:
        made = time.strftime("%Y-%m-%d %H:%M", time.localtime(client.created))
        origins = f"  origins: {', '.join(client.origins)}" if client.origins else ""
        print(f"{client.name}  created {made}{origins}  sees: {client.profile_text()}")
    return 0


async def _clients_profile(args: argparse.Namespace) -> int:
    from portico.gateway.clients import ClientBook, ClientError

    book = ClientBook(cli_secrets(load_config(args)))
    servers = tuple(args.server) if args.server is not None else None
    try:
        client = await book.set_profile(args.name, servers, tuple(args.tool))
    except ClientError as exc:
        raise CommandError(str(exc), code=2) from exc
    print(f"{client.name} sees {client.profile_text()}.")
    return 0


async def _clients_remove(args: argparse.Namespace) -> int:
    from portico.gateway.clients import ClientBook, ClientError

    book = ClientBook(cli_secrets(load_config(args)))
    try:
        removed = await book.remove(args.name)
    except ClientError as exc:
        raise CommandError(str(exc)) from exc
    if not removed:
        raise CommandError(f"no client named {args.name!r} (see `portico clients list`)", code=2)
    print(f"Revoked {args.name}'s token.")
    return 0
