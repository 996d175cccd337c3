"""Open the desktop app from the CLI entry point."""

from __future__ import annotations

import importlib.util
import sys


def open_desktop() -> int:
    if importlib.util.find_spec("portico.ui.app") is None:
        print("portico: the desktop app is not built yet; try `portico --help`.", file=sys.stderr)
        return 1
    from portico.ui.app import main as app_main

    return app_main()
