"""``portico``: the terminal face. With no arguments it opens the desktop app.

Each area registers its own subcommands (``register(groups)``) from its own module, so
the command modules stay small and independent.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from portico import __version__
from portico.cli import commands

Handler = Callable[[argparse.Namespace], int]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="portico",
        description="Portico: a desktop host for MCP servers. Run without arguments to "
        "open the app.",
    )
    parser.add_argument("--version", action="version", version=f"portico {__version__}")
    top = parser.add_subparsers(dest="command", metavar="COMMAND")
    config = top.add_parser("config", help="read, check and edit config files")
    mcp = top.add_parser("mcp", help="manage MCP servers")
    groups = commands.Groups(
        top=top,
        config=config.add_subparsers(dest="config_command", metavar="SUBCOMMAND", required=True),
        mcp=mcp.add_subparsers(dest="mcp_command", metavar="SUBCOMMAND", required=True),
    )
    for register in commands.registrars():
        register(groups)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    from portico.cli.desktop import is_desktop_invocation

    if is_desktop_invocation(args_list):
        from portico.cli.desktop import open_desktop

        return open_desktop(args_list)
    parser = build_parser()
    args = parser.parse_args(args_list)
    handler: Handler | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 2
    try:
        return handler(args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # the last resort: one line, never a traceback
        log_file = _log_crash(exc)
        what = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        print(
            f"portico: {args.command} failed unexpectedly: {what}\n"
            f"The details are in {log_file}; please report them.",
            file=sys.stderr,
        )
        return 1


def _log_crash(exc: BaseException) -> str:
    """Write the traceback under the log dir (never to the terminal); return where."""
    import traceback

    from portico.paths import paths

    try:
        folder = paths().log_dir
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "cli-crash.log"
        with path.open("a", encoding="utf-8") as out:
            out.write("".join(traceback.format_exception(exc)) + "\n")
        return str(path)
    except OSError:
        return "(the log folder could not be written)"


if __name__ == "__main__":
    raise SystemExit(main())
