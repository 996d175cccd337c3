"""``portico``: the terminal face. With no arguments it opens the desktop app.

Each area registers its own subcommands (``register(groups)``) from its own module, so
the command modules stay small and independent.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable, Sequence

from portico import __version__
from portico.cli import commands

Handler = Callable[[argparse.Namespace], int]


def build_parser(modules: tuple[str, ...] = commands.MODULES) -> argparse.ArgumentParser:
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
    for register in commands.registrars(modules):
        register(groups)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    from portico.cli.desktop import is_desktop_invocation

    if is_desktop_invocation(args_list):
        from portico.cli.desktop import open_desktop

        return open_desktop(args_list)
    runtime_only = (
        args_list[:1] == ["mcp"]
        and args_list[1:2] != []
        and (args_list[1] in commands.RUNTIME_COMMANDS)
    )
    parser = build_parser((commands.RUNTIME_MODULE,) if runtime_only else commands.MODULES)
    try:
        args = parser.parse_args(args_list)
    except BrokenPipeError:  # --help into a closed pipe
        return _quiet_exit_on_closed_stdout()
    handler: Handler | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 2
    log_handler = _log_to_file()
    try:
        code = handler(args)
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's exit
        return code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # the last resort: one line, never a traceback
        if _closed_pipe(exc):
            return _quiet_exit_on_closed_stdout()
        log_file = _log_crash(exc)
        what = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        print(
            f"portico: {args.command} failed unexpectedly: {what}\n"
            f"The details are in {log_file}; please report them.",
            file=sys.stderr,
        )
        return 1
    finally:
        if log_handler is not None:
            logging.getLogger("portico").removeHandler(log_handler)
            log_handler.close()


def _log_to_file() -> logging.Handler | None:
    """The core's log records go to ``<log dir>/cli.log``, not the terminal.

    The commands print what a person needs to read themselves; without a handler of its
    own, Python's last-resort handler would print every warning a second time.
    """
    from portico.paths import paths

    try:
        folder = paths().log_dir
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        handler: logging.Handler = logging.NullHandler()
    else:
        handler = logging.FileHandler(folder / "cli.log", encoding="utf-8", delay=True)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.setLevel(logging.WARNING)
    logging.getLogger("portico").addHandler(handler)
    return handler


def _closed_pipe(exc: BaseException) -> bool:
    """A write to a reader that went away (``portico config show | head``), possibly
    wrapped in an exception group by asyncio / anyio."""
    if isinstance(exc, BrokenPipeError):
        return True
    if isinstance(exc, BaseExceptionGroup):
        return all(_closed_pipe(inner) for inner in exc.exceptions)
    cause = exc.__cause__ or exc.__context__
    return isinstance(cause, BrokenPipeError) and isinstance(exc, OSError)


def _quiet_exit_on_closed_stdout() -> int:
    """The Unix convention for a closed stdout: stop quietly (as SIGPIPE would).

    Whatever is still buffered for stdout can never be written; pointing stdout at
    /dev/null keeps the interpreter's own flush at exit from complaining.
    """
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass
    return 141  # 128 + SIGPIPE, what a shell reports for a command a pipe stopped


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
