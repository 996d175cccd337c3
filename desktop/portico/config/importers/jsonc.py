"""Read the JSON files other MCP clients write (VS Code's and Cursor's allow comments).

``//`` and ``/* */`` comments and trailing commas are blanked out with spaces (newlines
kept) before ``json`` parses the text, so an error's line and column still point into the
person's file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from portico.config import limits


class ImportSourceError(Exception):
    """The file to import from is missing, unreadable or not valid JSON."""

    def __init__(
        self,
        message: str,
        path: Path | None = None,
        line: int | None = None,
        column: int | None = None,
    ) -> None:
        self.path = path
        self.line = line
        self.column = column
        self.message = message
        super().__init__(str(self))

    def __str__(self) -> str:
        where = str(self.path) if self.path else ""
        if self.line is not None:
            where += f":{self.line}:{self.column}"
        return f"{where}: {self.message}" if where else self.message


def strip_jsonc(text: str) -> str:
    """The text with comments and trailing commas replaced by spaces (same positions)."""
    out = list(text)
    i, n = 0, len(text)
    in_string = False
    last_comma: int | None = None  # index of a comma not yet followed by a value
    while i < n:
        c = text[i]
        if in_string:
            if c == "\\":
                i += 2
                continue
            if c == '"':
                in_string = False
            i += 1
            continue
        if c == '"':
            in_string = True
            last_comma = None
        elif c == "/" and i + 1 < n and text[i + 1] == "/":
            while i < n and text[i] != "\n":
                out[i] = " "
                i += 1
            continue
        elif c == "/" and i + 1 < n and text[i + 1] == "*":
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            for j in range(i, end):
                if text[j] not in "\r\n":
                    out[j] = " "
            i = end
            continue
        elif c == ",":
            last_comma = i
        elif c in "}]":
            if last_comma is not None:
                out[last_comma] = " "
            last_comma = None
        elif not c.isspace():
            last_comma = None
        i += 1
    return "".join(out)


def read_json(path: Path) -> Any:
    """Parse ``path`` as JSON with comments; every failure is an ``ImportSourceError``."""
    try:
        too_big = limits.size_problem(path.stat().st_size)
        if too_big is not None:
            raise ImportSourceError(too_big.message, path)
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise ImportSourceError(
            "file not found; pass the right one with --from PATH", path
        ) from None
    except OSError as exc:
        raise ImportSourceError(f"cannot read the file: {exc.strerror or exc}", path) from None
    except UnicodeDecodeError as exc:
        raise ImportSourceError(f"not UTF-8 text ({exc.reason})", path) from None
    try:
        return json.loads(strip_jsonc(text))
    except json.JSONDecodeError as exc:
        raise ImportSourceError(
            f"not valid JSON: {exc.msg}; fix the file and import again",
            path,
            exc.lineno,
            exc.colno,
        ) from None
