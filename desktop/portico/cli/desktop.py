"""Open the desktop app from the CLI entry point."""

from __future__ import annotations

import os
import sys

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


def open_desktop() -> int:
    if display_missing():
        print(NO_DISPLAY, file=sys.stderr)
        return 1
    from portico.ui.app import main as app_main

    return app_main()
