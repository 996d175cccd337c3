"""Open the desktop app: ``portico`` without a command, ``portico-desktop``, the menu entry.

Everything here runs before Qt is imported: a missing display or a platform plugin whose
system libraries are absent gets one clear message and a non-zero exit instead of Qt's
abort. Arguments: ``--hidden`` (start in the tray; the login item uses it) and
``--open-url URL`` or a bare ``portico:`` URL (the desktop entry's ``%u``).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

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


def is_desktop_invocation(args: Sequence[str]) -> bool:
    """True when ``portico ARGS`` means "open the app" rather than a CLI command."""
    if not args:
        return True
    first = args[0]
    return first in ("--open-url", "--hidden") or first.lower().startswith("portico:")


def parse_args(args: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="portico-desktop", description="Open the Portico desktop app."
    )
    parser.add_argument("--hidden", action="store_true", help="start in the system tray")
    parser.add_argument("--open-url", metavar="URL", help="open a portico:// link in the app")
    parser.add_argument("url", nargs="?", help="a portico:// link (what the desktop passes)")
    parsed = parser.parse_args(list(args))
    if parsed.url and not parsed.open_url:
        parsed.open_url = parsed.url
    return parsed


def open_desktop(args: Sequence[str] = ()) -> int:
    parsed = parse_args(args)
    if display_missing():
        print(NO_DISPLAY, file=sys.stderr)
        return 1
    from portico.cli import qt_libs

    problem = qt_libs.check()
    if problem is not None:
        print(qt_libs.message(problem, qt_libs.detect_distro()), file=sys.stderr)
        return 1
    from portico.ui.app import main as app_main

    return app_main(sys.argv[:1], open_url=parsed.open_url, hidden=parsed.hidden)


def main() -> int:
    """The ``portico-desktop`` entry point (the menu entry and the login item run it)."""
    return open_desktop(sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
