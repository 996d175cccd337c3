"""What a dialect reader hands to validation: plain values plus the line of every key."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from portico.config.model import Diagnostic, Dialect, Scope

KeyPath = tuple[str | int, ...]


@dataclass
class RawServer:
    """One server entry as written: plain Python values, spellings untouched."""

    name: str
    data: Any  # normally a dict; anything else is reported by validation
    line: int  # the line of the entry's header / name
    lines: dict[KeyPath, int] = field(default_factory=dict)  # key path inside the entry

    def line_of(self, path: KeyPath) -> int:
        """The line of ``path``, else of its nearest written parent, else of the entry."""
        while path:
            if path in self.lines:
                return self.lines[path]
            path = path[:-1]
        return self.line


@dataclass
class RawSetting:
    name: str  # SettingSpec.name
    value: Any
    line: int


@dataclass
class RawModels:
    """What a dialect found: the ``models`` value, the default and their lines."""

    value: Any = None
    line: int = 0
    lines: dict[KeyPath, int] = field(default_factory=dict)  # below ``models``
    default: Any = None  # TOML top-level default_model
    default_line: int = 0

    @property
    def present(self) -> bool:
        return self.line > 0 or self.default_line > 0


@dataclass
class RawFile:
    path: Path
    scope: Scope
    dialect: Dialect
    servers: list[RawServer] = field(default_factory=list)
    settings: list[RawSetting] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    parsed: bool = True  # False: the file did not parse (or could not be read)
    blocked: bool = False  # True: a newer ``version``; no server of this file starts
    models: RawModels = field(default_factory=RawModels)  # the ``models`` keys

    def error(
        self,
        message: str,
        *,
        line: int | None = None,
        server: str | None = None,
        key: str | None = None,
        column: int | None = None,
    ) -> None:
        self.diagnostics.append(Diagnostic("error", message, self.path, line, server, key, column))

    def warning(
        self,
        message: str,
        *,
        line: int | None = None,
        server: str | None = None,
        key: str | None = None,
    ) -> None:
        self.diagnostics.append(Diagnostic("warning", message, self.path, line, server, key))
