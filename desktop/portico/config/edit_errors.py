"""The errors of config edits, apart from ``document`` so the dialect editors can raise them."""

from __future__ import annotations

from pathlib import Path


class EditError(ValueError):
    """An edit that cannot be made (unknown server, name taken, key is not a table...)."""


class DocumentParseError(EditError):
    """The file does not parse, so it cannot be edited without losing what it holds."""

    def __init__(
        self, path: Path, message: str, line: int | None = None, column: int | None = None
    ) -> None:
        self.path = path
        self.line = line
        self.column = column
        where = f"{path}:{line}" if line else str(path)
        if line and column:
            where += f":{column}"
        super().__init__(f"{where}: {message}; fix the file by hand, then retry the edit.")


class NewerVersionError(EditError):
    """The file says ``version = N`` for a format newer than this build knows."""
