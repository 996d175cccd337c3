"""``portico connect NAME``: give another MCP client its own token and point its config
file at the local endpoint (``--remove`` undoes both). The client's file keeps
everything else as it was, comments included (``config/jsonc_edit.py``)."""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from portico.cli.commands import Groups
from portico.cli.common import CommandError, async_command, cli_secrets, load_config

ENTRY = "portico"  # the server name the client sees
# kind -> (the key path of its servers object, how its entries are written)
KINDS: dict[str, tuple[tuple[str, ...], str]] = {
    "claude-code": (("mcpServers",), "http"),
    "cursor": (("mcpServers",), "url"),
    "vscode": (("servers",), "http"),
    "claude-desktop": (("mcpServers",), "stdio-only"),
    "generic": ((), "print"),
}
# How each client's file refers to an environment variable (its own substitution syntax):
# Claude Code expands ${VAR} in .claude.json / .mcp.json; Cursor and VS Code ${env:VAR}.
ENV_REFERENCE = {"claude-code": "${%s}", "cursor": "${env:%s}", "vscode": "${env:%s}"}
ENV_NAME = re.compile(r"[A-Z_][A-Z0-9_]*")
# VS Code's documented way to keep a secret out of mcp.json: an `inputs` entry with
# "password": true, referred to as ${input:ID}; VS Code asks once and keeps the answer in
# its secret storage. So for vscode the token is never written into the file.
VSCODE_INPUT = {
    "type": "promptString",
    "id": "portico-token",
    "description": "Portico endpoint token (printed by `portico connect vscode`)",
    "password": True,
}


def register(groups: Groups) -> None:
    p = groups.top.add_parser(
        "connect",
        help="let another MCP client use your servers through the local endpoint",
        description="Create the client's own token and add Portico to its config file "
        "(keeping the file's other content and comments); --remove undoes it. The endpoint "
        "needs a fixed port (endpoint.port) so the URL in the client's file stays right.",
    )
    p.add_argument("name", choices=sorted(KINDS), help="the client")
    p.add_argument("--remove", action="store_true", help="remove Portico and revoke the token")
    p.add_argument("--file", type=Path, default=None, help="the client's config file")
    p.add_argument(
        "--token-env",
        metavar="VAR",
        default=None,
        help="write a reference to the environment variable VAR instead of the token "
        "itself (the client must be started with VAR set; the token is printed once)",
    )
    p.set_defaults(handler=async_command(_connect))


def _entry(style: str, url: str, token: str) -> dict[str, Any]:
    """``token``: the token itself, or the client's reference to where it is."""
    headers = {"Authorization": f"Bearer {token}"}
    if style == "url":
        return {"url": url, "headers": headers}
    return {"type": "http", "url": url, "headers": headers}


def _client_file(kind: str, explicit: Path | None) -> Path:
    if explicit is not None:
        return explicit.expanduser()
    from portico.config.importers import default_locations

    return default_locations(kind)[-1]  # the user-level file


async def _connect(args: argparse.Namespace) -> int:
    from portico.gateway.clients import ClientBook, ClientError

    kind: str = args.name
    path_keys, style = KINDS[kind]
    if style == "stdio-only":
        raise CommandError(
            "Claude Desktop's config file takes stdio servers only, so it cannot point at "
            "the endpoint yet; use `portico connect generic` with a client that speaks "
            "Streamable HTTP",
            code=2,
        )
    config = load_config(args)
    book = ClientBook(cli_secrets(config))
    if args.remove:
        return await _remove(kind, path_keys, style, args.file, book)
    port = config.settings.endpoint_port
    if not port:
        raise CommandError(
            "the endpoint has no fixed port, so the client's file would point at a URL "
            "that changes: set one in config.yaml (endpoint: {port: 47800}) first",
            code=2,
        )
    url = f"http://127.0.0.1:{port}/mcp"
    variable: str | None = args.token_env
    if variable is not None and not ENV_NAME.fullmatch(variable):
        raise CommandError(
            f"--token-env {variable!r}: use capitals, digits and '_' (e.g. PORTICO_TOKEN)",
            code=2,
        )
    try:
        token = await book.add(kind)
    except ClientError as exc:
        raise CommandError(str(exc), code=2) from exc
    if style == "print":
        print(json.dumps({"url": url, "headers": {"Authorization": f"Bearer {token}"}}, indent=2))
        print(
            f"The token is shown only now; revoke it with `portico connect {kind} --remove`.",
            file=sys.stderr,
        )
        return 0
    path = _client_file(kind, args.file)
    prompted = kind == "vscode" and variable is None
    if prompted:
        written = "${input:" + str(VSCODE_INPUT["id"]) + "}"
    else:
        written = ENV_REFERENCE[kind] % variable if variable is not None else token
    entry = _entry(style, url, written)
    _edit(path, lambda text: _set(text, kind, path_keys, entry, prompted))
    print(f"Added '{ENTRY}' ({url}) to {path}; {kind} has its own token now.")
    if prompted:
        print(
            "VS Code asks for the token the first time it starts the server and keeps it "
            "in its secret storage; paste this (shown only now):\n"
            f"  {token}",
            file=sys.stderr,
        )
    elif variable is not None:
        print(
            f"The file refers to ${variable}; start {kind} with it set (shown only now):\n"
            f"  export {variable}={token}",
            file=sys.stderr,
        )
    return 0


async def _remove(
    kind: str, path_keys: tuple[str, ...], style: str, file: Path | None, book: Any
) -> int:
    revoked = await book.remove(kind)
    removed = False
    if style != "print":
        path = _client_file(kind, file)
        if path.is_file():
            removed = _edit(path, lambda text: _drop(text, kind, path_keys))
    if not (revoked or removed):
        raise CommandError(f"{kind} was not connected (no token, no '{ENTRY}' entry)", code=2)
    print(f"Disconnected {kind}: token revoked" + (", entry removed" if removed else "") + ".")
    return 0


def _set(
    text: str, kind: str, path_keys: tuple[str, ...], entry: dict[str, Any], prompted: bool
) -> tuple[str, bool]:
    from portico.config.jsonc_edit import remove_element, set_element, set_member

    text = set_member(text, path_keys, ENTRY, entry)
    if prompted:
        text = set_element(text, ("inputs",), "id", VSCODE_INPUT)
    elif kind == "vscode":  # the input of an earlier connect without --token-env: unused now
        text, _gone = remove_element(text, ("inputs",), "id", str(VSCODE_INPUT["id"]))
    return text, True


def _drop(text: str, kind: str, path_keys: tuple[str, ...]) -> tuple[str, bool]:
    from portico.config.jsonc_edit import remove_element, remove_member

    text, removed = remove_member(text, path_keys, ENTRY)
    if kind != "vscode":
        return text, removed
    text, dropped = remove_element(text, ("inputs",), "id", str(VSCODE_INPUT["id"]))
    return text, removed or dropped


def _edit(path: Path, change: Any) -> bool:
    """Apply ``change`` to the file's text, atomically, refusing a concurrent edit."""
    from portico.config.atomic import ConflictError, read_bytes, write_atomic
    from portico.config.importers.jsonc import strip_jsonc
    from portico.config.jsonc_edit import JsoncEditError

    data, snapshot = read_bytes(path)
    text = data.decode("utf-8-sig") if data is not None else ""
    try:
        new, changed = change(text)
    except JsoncEditError as exc:
        raise CommandError(f"{path}: {exc}; nothing was written") from exc
    if not changed:
        return False
    try:
        json.loads(strip_jsonc(new))
    except ValueError as exc:  # never leave a file the client cannot read
        raise CommandError(
            f"{path}: the edit would not be valid JSON ({exc}); nothing was written"
        ) from exc
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        write_atomic(path, new, expected=snapshot, mode=0o600)
    except ConflictError as exc:
        raise CommandError(str(exc)) from exc
    return True
