"""``portico mcp login|auth|logout NAME`` and ``portico secret set|get|delete NAME``.

``login`` (alias ``auth``) signs in to an OAuth server now: on a terminal it prints the
authorize URL and takes a pasted redirect while the loopback listener waits; it exits 0
only when a token was stored. ``logout`` forgets tokens and the client registration.
``secret`` manages the keyring entries that ``${keyring:NAME}`` references read.
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import sys
from typing import TYPE_CHECKING, Any

from portico.cli.commands import Groups
from portico.cli.common import (
    CommandError,
    add_project_option,
    async_command,
    cli_prompter,
    err,
    load_config,
    server_named,
)

if TYPE_CHECKING:
    from portico.prompts import AuthorizeRequest, DeviceCodeRequest, Prompter


def register(groups: Groups) -> None:
    for name, text in (("login", "sign in to an OAuth MCP server"), ("auth", "same as login")):
        p = groups.mcp.add_parser(name, help=text)
        p.add_argument("name", help="server name")
        p.add_argument(
            "--flow",
            choices=("browser", "device"),
            default=None,
            help="device: show a code to enter on any device (default: oauth.flow)",
        )
        p.add_argument(
            "--no-browser",
            action="store_true",
            help="do not open a browser; print the URL (and take a pasted redirect)",
        )
        add_project_option(p)
        p.set_defaults(handler=cmd_login)

    p = groups.mcp.add_parser("logout", help="forget a server's tokens and client registration")
    p.add_argument("name", help="server name")
    add_project_option(p)
    p.set_defaults(handler=cmd_logout)

    secret = groups.top.add_parser("secret", help="manage secrets in the keyring")
    actions = secret.add_subparsers(dest="secret_command", metavar="ACTION", required=True)
    for action, text in (
        ("set", "store a secret (read without echo)"),
        ("get", "print a stored secret"),
        ("delete", "remove a stored secret"),
    ):
        p = actions.add_parser(action, help=text)
        p.add_argument("name", help="the NAME of ${keyring:NAME}")
        p.set_defaults(handler=cmd_secret, secret_action=action)


def _print_url(url: str) -> None:
    from portico.policy.url_review import review_url
    from portico.text import visible

    for line in review_url(url).lines(address=""):
        print(f"  {visible(line)}")


class _PlainPrompter:
    """Without a terminal to read from: print what the person needs and wait."""

    def __init__(self, base: Prompter) -> None:
        self.base = base

    def __getattr__(self, name: str) -> Any:
        return getattr(self.base, name)

    async def authorize(self, request: AuthorizeRequest) -> str | None:
        print(f"Sign in to '{request.server}': open this URL:")
        _print_url(request.authorize_url)
        print(f"Waiting for the redirect to {request.redirect_uri} …", flush=True)
        await asyncio.Event().wait()
        return None

    async def device_code(self, request: DeviceCodeRequest) -> None:
        url = request.verification_uri_complete or request.verification_uri
        print(f"Sign in to '{request.server}' on any device: open")
        _print_url(url)
        print(f"  and enter the code {request.user_code}", flush=True)
        await asyncio.Event().wait()


def _prompter() -> Prompter:
    prompter = cli_prompter()
    if sys.stdin.isatty() and sys.stdout.isatty():
        return prompter
    return _PlainPrompter(prompter)


async def _login(args: argparse.Namespace) -> int:
    from portico.auth.errors import AuthError
    from portico.policy.prompters import NonInteractivePrompter
    from portico.services import build_services

    config = load_config(args)
    spec = server_named(config, args.name)
    if not spec.url:
        raise CommandError(
            f"'{spec.name}' ({spec.source}) is a stdio server; only HTTP servers sign in", code=2
        )
    # Trust is reviewed elsewhere (`portico mcp trust`); sign-in questions come here.
    services = build_services(
        NonInteractivePrompter(), ask_trust=False, auth_prompter=_prompter(), config=config
    )
    # A project server is contacted only once trusted, and only at the addresses the
    # trust check pinned (its OAuth requests to the MCP origin dial those).
    verdict = await services.policy.trust(spec)
    if not verdict.allowed:
        raise CommandError("; ".join(verdict.reasons))
    try:
        await services.auth.login(spec, flow=args.flow, browser=not args.no_browser)
    except AuthError as exc:
        raise CommandError(str(exc)) from exc
    where = services.secrets.storage_kind()
    if where == "memory":
        err(
            f"signed in to '{spec.name}', but there is no secure keyring, so the token lived "
            "in this command's memory only and is gone now. Sign in from the app instead, or "
            "add `secrets: {file_fallback: true}` to config.yaml to keep tokens in 0600 files."
        )
        return 1
    note = (
        "in the keyring"
        if where == "keyring"
        else f"in {services.secrets.state_dir / 'mcp-tokens'} (mode 0600)"
    )
    print(f"Signed in to '{spec.name}'; the token is stored {note}.")
    return 0


async def _logout(args: argparse.Namespace) -> int:
    from portico.services import build_services

    config = load_config(args)
    spec = server_named(config, args.name)
    services = build_services(_prompter(), ask_trust=False, config=config)
    had = await services.auth.has_token(spec)
    await services.auth.logout(spec)
    print(f"Signed out of '{spec.name}'." if had else f"'{spec.name}' had no stored sign-in.")
    return 0


cmd_login = async_command(_login)
cmd_logout = async_command(_logout)


def cmd_secret(args: argparse.Namespace) -> int:
    from portico.auth.secret_store import SecretStoreError

    try:
        return asyncio.run(_secret(args))
    except SecretStoreError as exc:
        err(str(exc))
        return 1


def read_secret_value(name: str) -> str:
    """The value to store: typed without echo on a terminal, else all of standard input
    (one trailing newline dropped, as ``echo value | portico secret set NAME`` adds)."""
    if sys.stdin.isatty():
        return getpass.getpass(f"Value for {name} (not shown): ")
    value = sys.stdin.read()
    if value.endswith("\r\n"):
        return value[:-2]
    return value[:-1] if value.endswith("\n") else value


async def _secret(args: argparse.Namespace) -> int:
    from portico.auth.secret_store import SecretStore, valid_user_name

    name: str = args.name
    if not valid_user_name(name):
        err(
            f"{name!r} is not a secret name: use letters, digits, '_', '.' and '-' only "
            "(no '/'); for example GITHUB_TOKEN"
        )
        return 2
    config = load_config(args)
    # Only the store: the rest of the services (OAuth, the MCP SDK) would double the start-up.
    store = SecretStore(file_fallback=config.settings.file_fallback_for_secrets)
    if args.secret_action == "set":
        value = read_secret_value(name)
        if not value:
            err("no value given; nothing stored")
            return 1
        where = await store.store_secret(name, value)
        print(f"Stored {name} in {where}. Use it in config as ${{keyring:{name}}}.")
        return 0
    notice = store.insecure_notice()
    if notice:
        print(f"warning: {notice}", file=sys.stderr)
    if args.secret_action == "get":
        found = await store.lookup_secret(name)
        if found is None:
            err(f"no secret named {name!r}; store one with `portico secret set {name}`")
            return 1
        print("warning: this prints a secret to your terminal", file=sys.stderr)
        print(found)
        return 0
    existed = await store.lookup_secret(name) is not None
    await store.delete_secret(name)
    print(f"Deleted {name}." if existed else f"No secret named {name!r}; nothing to delete.")
    return 0
