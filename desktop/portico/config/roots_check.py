"""The checks of a ``roots`` list (a server's, or the top-level default for global
servers): every entry an absolute folder, ``~`` allowed; a folder that does not exist (yet)
is a warning, and the runtime leaves it out of ``roots/list`` until it does."""

from __future__ import annotations

import os
from pathlib import Path


def expanded(text: str) -> Path:
    """The folder ``text`` names: ``~`` expanded, ``.``/``..`` and symlinks resolved."""
    return Path(os.path.expanduser(text)).resolve()


def root_problem(text: str) -> tuple[str | None, str | None]:
    """(error, warning) about one entry; both None when it is a folder that exists."""
    path = Path(os.path.expanduser(text))
    if not path.is_absolute():
        return (
            f"{text!r} is not an absolute folder: write the full path (a leading ~ is your"
            " home folder)",
            None,
        )
    if not path.exists():
        return None, f"folder {path} does not exist; it is not offered until it does"
    if not path.is_dir():
        return None, f"{path} is not a folder; it is not offered"
    return None, None
