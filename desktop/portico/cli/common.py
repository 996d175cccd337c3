"""What every command module shares: the project option, loading, finding a server, the
Prompter and the runtime hooks for terminal use."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from portico.paths import PROJECT_DIR_NAME, find_project

if TYPE_CHECKING:
    from portico.auth.secret_store import SecretStore
    from portico.config.model import Config, ServerSpec
    from portico.prompts import Prompter
    from portico.services import Services


def err(text: str) -> None:
    print(f"portico: {text}", file=sys.stderr)


class CommandError(Exception):
    """Stops a command: its message is one line on stderr, ``code`` the exit status."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


def async_command(
    run: Callable[[argparse.Namespace], Coroutine[Any, Any, int]],
) -> Callable[[argparse.Namespace], int]:
    """A command handler running ``run(args)`` on one loop; a CommandError becomes its
    line and exit status."""

    def handler(args: argparse.Namespace) -> int:
        try:
            return asyncio.run(run(args))
        except CommandError as exc:
            err(str(exc))
            return exc.code

    return handler


def add_project_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--project",
        type=Path,
        default=None,
        metavar="DIR",
        help=f"project folder (default: the nearest folder from here up that has "
        f"{PROJECT_DIR_NAME}/, else the current directory)",
    )


def project_of(args: argparse.Namespace) -> Path:
    """``--project`` when given, else the nearest project above the cwd, else the cwd."""
    explicit: Path | None = getattr(args, "project", None)
    if explicit is not None:
        return explicit.expanduser().resolve()
    return find_project() or Path.cwd().resolve()


def load_config(
    args: argparse.Namespace, *, report: Literal["errors", "all", "none"] = "errors"
) -> Config:
    """Load both scopes and print the diagnostics asked for on stderr."""
    from portico.config import load
    from portico.config.project_rules import is_security_note

    config = load(project_of(args))
    errors = tuple(d for d in config.diagnostics if d.is_error or is_security_note(d))
    shown = {"errors": errors, "all": config.diagnostics, "none": ()}[report]
    for diag in shown:
        print(str(diag), file=sys.stderr)
    return config


def server_named(
    config: Config,
    name: str,
    *,
    among: Callable[[ServerSpec], bool] | None = None,
    listed_as: str = "servers",
    next_step: str = "",
) -> ServerSpec:
    """The server, else a CommandError (exit 2) naming the ones that exist (those
    ``among`` picks, listed as ``listed_as``) and, if given, what to do next."""
    spec = config.server(name)
    if spec is None:
        names = ", ".join(s.name for s in config.servers if among is None or among(s))
        text = f"no server named {name!r} in the config ({listed_as}: {names or 'none'})"
        raise CommandError(text + (f"; {next_step}" if next_step else ""), code=2)
    return spec


def find_server(config: Config, name: str) -> ServerSpec | None:
    """The server, or None after saying which names exist."""
    try:
        return server_named(config, name)
    except CommandError as exc:
        err(str(exc))
        return None


def cli_prompter() -> Prompter:
    """A TerminalPrompter on a TTY, else the NonInteractivePrompter."""
    if sys.stdin.isatty() and sys.stdout.isatty():
        from portico.cli.terminal_prompter import TerminalPrompter

        return TerminalPrompter()
    from portico.policy.prompters import NonInteractivePrompter

    return NonInteractivePrompter()


def cli_secrets(config: Config) -> SecretStore:
    """The secret store alone, with the config's ``secrets.file_fallback``: a command that
    only reads or writes secrets does not build the services (OAuth, the MCP SDK: 0.4 s)."""
    from portico.auth.secret_store import SecretStore

    return SecretStore(file_fallback=config.settings.file_fallback_for_secrets)


def cli_services(config: Config | None = None, *, ask_trust: bool = True) -> Services:
    """The core's services for a command: asks on a TTY, refuses otherwise.

    Background connects never start a browser sign-in from a command; ``portico mcp
    login`` is the one place that does.
    """
    from portico.policy.prompters import NonInteractivePrompter
    from portico.services import build_services

    return build_services(
        cli_prompter(),
        ask_trust=ask_trust,
        auth_prompter=NonInteractivePrompter(),
        config=config,
    )
