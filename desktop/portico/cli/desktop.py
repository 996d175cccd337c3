"""Open the desktop app: ``portico`` without a command, ``portico-desktop``, the menu entry.

Everything here runs before Qt is imported: a missing display or a platform plugin whose
system libraries are absent gets one clear message and a non-zero exit instead of Qt's
abort. Arguments: ``--hidden`` (start in the tray; the login item uses it),
``--open-url URL`` or a bare ``portico:`` URL (the desktop entry's ``%u``), and
``--project DIR``. Without ``--project`` the app opens the project it is started in (the
nearest folder from the cwd up with ``.portico/``), else the one it showed last.

A link is checked here first and what it would add is printed (the same lines as the
app's confirmation: the origin or command, each secret it would receive, every value,
the text to write); without a display, a terminal confirms it instead of the app. A
linked server always waits for its trust review before it first connects.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from portico.config.deeplink import Prepared

NO_DISPLAY = (
    "portico: no display to open the app on (DISPLAY and WAYLAND_DISPLAY are unset). "
    "Run it from a desktop session, or use the CLI: `portico --help`."
)


def display_missing(environ: dict[str, str] | None = None, platform: str = sys.platform) -> bool:
    """True on Linux/BSD when Qt would find no screen (it then aborts the process)."""
    env = os.environ if environ is None else environ
    if not platform.startswith(("linux", "freebsd", "openbsd", "netbsd")):
        return False
    if env.get("QT_QPA_PLATFORM"):
        return False  # the person chose a platform (offscreen, vnc, ...)
    return not (env.get("DISPLAY") or env.get("WAYLAND_DISPLAY"))


def display_unreachable(environ: dict[str, str] | None = None) -> str | None:
    """A message when neither the X display nor the Wayland socket named in the
    environment accepts a connection (Qt would abort with a misleading plugin error)."""
    env = os.environ if environ is None else environ
    if env.get("QT_QPA_PLATFORM") not in (None, "", "xcb", "wayland"):
        return None
    tried: list[str] = []
    wayland = env.get("WAYLAND_DISPLAY")
    if wayland:
        runtime = env.get("XDG_RUNTIME_DIR", "")
        path = wayland if wayland.startswith("/") else os.path.join(runtime, wayland)
        if _connects(path):
            return None
        tried.append(f"the Wayland display {wayland} ({path})")
    display = env.get("DISPLAY")
    if display:
        host, _, rest = display.rpartition(":")
        number = rest.split(".")[0]
        if host not in ("", "unix") or not number.isdigit():
            return None  # a remote or unusual display: let Qt try it
        socket_path = f"/tmp/.X11-unix/X{number}"
        if _connects("\0" + socket_path) or _connects(socket_path):
            return None
        tried.append(f"the X display {display} ({socket_path})")
    if not tried:
        return None
    return (
        f"portico: cannot open a window: nothing listens on {' or '.join(tried)}. "
        "Is the desktop session running? The CLI works without one: `portico --help`."
    )


def _connects(address: str) -> bool:
    import socket

    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(2.0)
        try:
            sock.connect(address)
        except OSError:
            return False
    return True


def is_desktop_invocation(args: Sequence[str]) -> bool:
    """True when ``portico ARGS`` means "open the app" rather than a CLI command."""
    if not args:
        return True
    first = args[0]
    if first == "--project":  # `portico --project DIR [app options]`
        return is_desktop_invocation(args[2:])
    if first.startswith("--project="):
        return is_desktop_invocation(args[1:])
    return first in ("--open-url", "--hidden") or first.lower().startswith("portico:")


def parse_args(args: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="portico-desktop", description="Open the Portico desktop app."
    )
    parser.add_argument("--hidden", action="store_true", help="start in the system tray")
    parser.add_argument("--open-url", metavar="URL", help="open a portico:// link in the app")
    parser.add_argument(
        "--project",
        type=Path,
        metavar="DIR",
        help="the project folder to open (default: the one the app is started in)",
    )
    parser.add_argument("url", nargs="?", help="a portico:// link (what the desktop passes)")
    parsed = parser.parse_args(list(args))
    if parsed.url and not parsed.open_url:
        parsed.open_url = parsed.url
    return parsed


def start_project(parsed: argparse.Namespace, cwd: Path | None = None) -> Path | None:
    """The project the app opens: ``--project``, else the one it is started in, else None
    (the app then shows the project it showed last)."""
    from portico.paths import find_project

    explicit: Path | None = parsed.project
    if explicit is not None:
        return (cwd or Path.cwd()).joinpath(explicit.expanduser()).resolve()
    return find_project(cwd)


def link_confirmation(link: str) -> tuple[Prepared, list[str]]:
    """What a link would add, as lines (DeepLinkError when it cannot be added): the
    prepared write, and the confirmation's lines, each whole."""
    from portico.config.deeplink import parse_add_link, prepare
    from portico.policy.link_review import review_link

    prepared = prepare(parse_add_link(link))
    lines = [f"The link would add the server '{prepared.request.name}' to {prepared.path}:"]
    lines += [f"  {line}" for line in review_link(prepared).lines()]
    lines.append("These lines would be written:")
    lines += [f"  {line}" for line in prepared.added.splitlines()]
    return prepared, lines


def confirm_link_in_terminal(link: str, stdin: TextIO, stdout: TextIO) -> int:
    """Without a display: show what the link would add and write it on "y"."""
    from portico.config.atomic import ConflictError
    from portico.config.deeplink import DeepLinkError
    from portico.text import visible

    try:
        prepared, lines = link_confirmation(link)
    except DeepLinkError as exc:
        print(f"portico: cannot open the link: {exc}", file=sys.stderr)
        return 2
    for line in lines:
        stdout.write(visible(line) + "\n")
    stdout.write("Add it? [y/N] ")
    stdout.flush()
    if stdin.readline().strip().lower() not in ("y", "yes"):
        stdout.write("Nothing was added.\n")
        return 1
    try:
        prepared.write()
    except (ConflictError, OSError) as exc:
        print(f"portico: {prepared.request.name} was not added: {exc}", file=sys.stderr)
        return 1
    name = prepared.request.name
    stdout.write(
        f"Added {name} to {prepared.path}. It waits for your review before it first "
        f"connects: run `portico mcp trust {name}`.\n"
    )
    return 0


def open_desktop(args: Sequence[str] = ()) -> int:
    parsed = parse_args(args)
    project = start_project(parsed)
    if project is not None and not project.is_dir():
        print(f"portico: cannot open the project {project}: no such folder", file=sys.stderr)
        return 2
    if parsed.open_url:
        from portico.config.deeplink import DeepLinkError
        from portico.text import visible

        try:
            _prepared, lines = link_confirmation(parsed.open_url)
        except DeepLinkError as exc:  # said here, before any window: the app would only log it
            print(f"portico: cannot open the link: {exc}", file=sys.stderr)
            return 2
        if display_missing():
            if sys.stdin.isatty():
                return confirm_link_in_terminal(parsed.open_url, sys.stdin, sys.stdout)
            for line in lines:
                print(visible(line))
            print(f"{NO_DISPLAY} Nothing was added.", file=sys.stderr)
            return 1
        for line in lines:  # the app asks; a terminal that started it sees the same
            print(visible(line))
    if display_missing():
        print(NO_DISPLAY, file=sys.stderr)
        return 1
    unreachable = display_unreachable() if sys.platform.startswith("linux") else None
    if unreachable:
        print(unreachable, file=sys.stderr)
        return 1
    from portico.cli import qt_libs

    problem = qt_libs.check()
    if problem is not None:
        print(qt_libs.message(problem, qt_libs.detect_distro()), file=sys.stderr)
        return 1
    from portico.ui.app import main as app_main

    return app_main(sys.argv[:1], open_url=parsed.open_url, hidden=parsed.hidden, project=project)


def main() -> int:
    """The ``portico-desktop`` entry point (the menu entry and the login item run it)."""
    return open_desktop(sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
