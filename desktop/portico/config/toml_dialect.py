"""Reading ``mcp.toml``: servers under ``[mcp.NAME]``, top-level ``version`` and ``defer_tools``.

tomlkit parses (and reports syntax errors with line and column); it keeps no positions,
so :func:`key_lines` scans the same text once more to find the line of every key.
"""

from __future__ import annotations

import bisect
import re
from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.exceptions import ParseError, TOMLKitError

from portico.config import schema
from portico.config.model import Dialect, Scope
from portico.config.parse_count import counted
from portico.config.raw import KeyPath, RawFile, RawServer, RawSetting

_TOP_KEYS = (
    "version",
    "roots",
    "defer_tools",
    "discovery_concurrency",
    "default_model",
    "models",
    "oauth",
    "sandbox",
    "chat_model",
    "chat_servers",
    "chat_tools",
    schema.TOML_SERVERS_KEY,
)
_LOCATION_SUFFIX = re.compile(r"\s+at line \d+ col \d+$")
_BARE = re.compile(r"[A-Za-z0-9_-]+")
_DUPLICATE = re.compile(r'Key "(.+)" already exists')
_DEFINITION = re.compile(r"^\s*(?:\[+\s*([^\]]+?)\s*\]+|([^=#\[]+?)\s*=)")


def _duplicate_at(text: str, key: str, before: int) -> tuple[int, int] | None:
    """Line and column of the last header or assignment of ``key`` (its last key part) up
    to line ``before``: the duplicate tomlkit complains about."""
    found: list[tuple[int, int]] = []
    for number, line in enumerate(text.splitlines()[:before], start=1):
        match = _DEFINITION.match(line)
        if not match:
            continue
        written = (match.group(1) or match.group(2)).rsplit(".", 1)[-1].strip().strip("\"'")
        if written == key:
            found.append((number, len(line) - len(line.lstrip()) + 1))
    return found[-1] if len(found) >= 2 else None


def describe_parse_error(exc: Exception, text: str) -> tuple[str, int | None, int | None]:
    """(message, line, column) of a tomlkit error, in words a person can act on."""
    if not isinstance(exc, ParseError):
        duplicate = _DUPLICATE.match(str(exc))
        if duplicate:  # raised while building an inline table: no position of its own
            found = _inline_duplicate(text, duplicate.group(1))
            if found:
                return f"{exc} (in an inline table)", found[0], found[1]
        return str(exc), None, None
    message = _LOCATION_SUFFIX.sub("", str(exc)).rstrip(".")
    line: int | None = exc.line
    column: int | None = exc.col + 1
    if message.endswith("character: '\\x00'") or message == "Unexpected end of file":
        message = "unexpected end of file (an unclosed bracket, brace or quote?)"
        line = text.count("\n") + 1
        column = len(text.rsplit("\n", 1)[-1]) + 1
    elif message.endswith("character: '\\n'"):
        message = "unexpected end of line"
    duplicate = _DUPLICATE.match(message)
    if duplicate and line is not None:  # tomlkit reports where the duplicate table ends
        line, column = _duplicate_at(text, duplicate.group(1), line) or (line, column)
    return message, line, column


def _inline_duplicate(text: str, key: str) -> tuple[int, int] | None:
    """Line and column of the second ``key =`` inside one inline table."""
    pattern = re.compile(r"""(?:^|[{,])\s*(?:"%s"|'%s'|%s)\s*=""" % ((re.escape(key),) * 3))
    for number, line in enumerate(text.splitlines(), start=1):
        start = line.find("{")
        if start < 0:
            continue
        hits = list(pattern.finditer(line, start))
        if len(hits) >= 2:
            match = hits[1]
            offset = len(match.group(0)) - len(match.group(0).lstrip("{, \t"))
            return number, match.start() + offset + 1
    return None


def parse(text: str, path: Path, scope: Scope) -> RawFile:
    raw = RawFile(path=path, scope=scope, dialect=Dialect.TOML)
    counted(path)
    try:
        doc = tomlkit.parse(text)
    except (ParseError, TOMLKitError) as exc:
        message, line, column = describe_parse_error(exc, text)
        raw.parsed = False
        raw.error(
            f"not valid TOML: {message}; fix the file (the servers it defined keep their "
            "previous settings until it parses)",
            line=line,
            column=column,
        )
        return raw
    data: dict[str, Any] = doc.unwrap()
    lines = key_lines(text)

    def line_of(*path: str | int) -> int:
        return _line_of(lines, path)

    version = data.get("version", schema.SUPPORTED_VERSION)
    if "version" in data:
        if isinstance(version, bool) or not isinstance(version, int) or version < 1:
            raw.blocked = True
            raw.error(
                f"{version!r} is not a valid version: write version = "
                f"{schema.SUPPORTED_VERSION}; no server in this file starts until it is fixed",
                line=line_of("version"),
                key="version",
            )
        elif version > schema.SUPPORTED_VERSION:
            raw.blocked = True
            raw.error(
                f"{version} is newer than this build of Portico reads (version "
                f"{schema.SUPPORTED_VERSION}): no server in this file starts; update "
                "Portico or rewrite the file for version 1",
                line=line_of("version"),
                key="version",
            )
    for name in ("defer_tools", "discovery_concurrency", "roots"):
        if name in data:
            raw.settings.append(RawSetting(name, data[name], line_of(name)))
    for name in ("chat_model", "chat_servers", "chat_tools"):  # chat.model, ... in YAML
        if name in data:
            raw.settings.append(RawSetting(name.replace("_", ".", 1), data[name], line_of(name)))
    oauth = data.get("oauth")
    if oauth is not None and not isinstance(oauth, dict):
        raw.warning(
            "must be a table: [oauth] client_metadata_url = URL; ignored",
            line=line_of("oauth"),
            key="oauth",
        )
    elif isinstance(oauth, dict):
        for sub, value in oauth.items():
            if sub == "client_metadata_url":
                where = lines.get(("oauth", sub), line_of("oauth"))
                raw.settings.append(RawSetting("oauth.client_metadata_url", value, where))
            else:
                raw.warning(
                    "unknown key, ignored (only client_metadata_url goes under [oauth])",
                    line=lines.get(("oauth", sub), line_of("oauth")),
                    key=f"oauth.{sub}",
                )

    _sandbox_setting(data.get("sandbox"), lines, line_of, raw)

    if "models" in data:
        raw.models.value = data["models"]
        raw.models.line = line_of("models")
        raw.models.lines = {p[1:]: n for p, n in lines.items() if len(p) > 1 and p[0] == "models"}
    if "default_model" in data:
        raw.models.default = data["default_model"]
        raw.models.default_line = line_of("default_model")

    for top, value in data.items():
        if top in _TOP_KEYS:
            continue
        from portico.config.validate import suggestion

        hint = suggestion(top, list(_TOP_KEYS))
        if isinstance(value, dict) and not hint:
            hint = f"; servers go under [mcp.{top}]"
        raw.warning(f"unknown top-level key, ignored{hint}", line=line_of(top), key=top)

    servers = data.get(schema.TOML_SERVERS_KEY, {})
    if not isinstance(servers, dict):
        raw.error(
            "must be a table of servers, e.g. [mcp.github]; no server in this file starts",
            line=line_of(schema.TOML_SERVERS_KEY),
            key=schema.TOML_SERVERS_KEY,
        )
        return raw
    # Each server's lines, grouped in one pass (a scan of every line per server made a
    # 400-server file quadratic).
    by_server: dict[Any, dict[KeyPath, int]] = {}
    for p, n in lines.items():
        if len(p) > 2 and p[0] == schema.TOML_SERVERS_KEY:
            by_server.setdefault(p[1], {})[p[2:]] = n
    for name, entry in servers.items():
        prefix = (schema.TOML_SERVERS_KEY, name)
        if name in _TOP_KEYS and not isinstance(entry, dict):
            raw.error(
                f"{name} is a top-level setting: move it above the first [mcp...] table "
                "(written here it would be a server)",
                line=line_of(*prefix),
                key=f"{schema.TOML_SERVERS_KEY}.{name}",
            )
            continue
        raw.servers.append(RawServer(name, entry, line_of(*prefix), by_server.get(name, {})))
    return raw


def _sandbox_setting(value: Any, lines: dict[KeyPath, int], line_of: Any, raw: RawFile) -> None:
    """The top-level ``[sandbox]`` table: only ``enabled`` (the default for every stdio
    server) goes there; a server's own paths and hosts go under [mcp.NAME.sandbox]."""
    if value is None:
        return
    if not isinstance(value, dict):
        raw.warning(
            "must be a table: [sandbox] enabled = true; ignored",
            line=line_of("sandbox"),
            key="sandbox",
        )
        return
    for sub, item in value.items():
        where = lines.get(("sandbox", sub), line_of("sandbox"))
        if sub == "enabled":
            raw.settings.append(RawSetting("sandbox.enabled", item, where))
        else:
            raw.warning(
                "unknown key, ignored (only enabled goes under the top-level [sandbox]; "
                "read, write and network go under [mcp.NAME.sandbox])",
                line=where,
                key=f"sandbox.{sub}",
            )


def _line_of(lines: dict[KeyPath, int], path: KeyPath) -> int:
    while path:
        if path in lines:
            return lines[path]
        path = path[:-1]
    return 1


class _Scanner:
    """Finds the line of every key of a TOML document that tomlkit already accepted."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.newlines = [i for i, ch in enumerate(text) if ch == "\n"]
        self.lines: dict[KeyPath, int] = {}

    def line(self, pos: int | None = None) -> int:
        return bisect.bisect_left(self.newlines, self.pos if pos is None else pos) + 1

    def peek(self, n: int = 1) -> str:
        return self.text[self.pos : self.pos + n]

    def record(self, path: KeyPath, line: int) -> None:
        for i in range(1, len(path) + 1):
            self.lines.setdefault(path[:i], line)

    def skip_blank(self, newlines: bool) -> None:
        while self.pos < len(self.text):
            ch = self.text[self.pos]
            if ch in " \t\r" or (newlines and ch == "\n"):
                self.pos += 1
            elif ch == "#":
                end = self.text.find("\n", self.pos)
                self.pos = len(self.text) if end < 0 else end
            else:
                return

    def read_key(self) -> tuple[str, ...]:
        parts: list[str] = []
        while True:
            self.skip_blank(False)
            ch = self.peek()
            if ch in ('"', "'"):
                parts.append(self.read_string())
            else:
                match = _BARE.match(self.text, self.pos)
                if not match:
                    raise ValueError(f"key expected at {self.pos}")
                parts.append(match.group(0))
                self.pos = match.end()
            self.skip_blank(False)
            if self.peek() != ".":
                return tuple(parts)
            self.pos += 1

    def read_string(self) -> str:
        quote = self.peek()
        if self.peek(3) == quote * 3:
            end = self.text.find(quote * 3, self.pos + 3)
            while self.text.startswith(quote, end + 3):  # up to two quotes may close it
                end += 1
            value = self.text[self.pos + 3 : end]
            self.pos = end + 3
            return value
        start = self.pos
        i = self.pos + 1
        while self.text[i] != quote:
            i += 2 if quote == '"' and self.text[i] == "\\" else 1
        self.pos = i + 1
        if quote == "'":
            return self.text[start + 1 : i]
        try:  # let tomlkit undo the escapes of a basic string
            return str(tomlkit.parse(f"k = {self.text[start : self.pos]}")["k"])
        except TOMLKitError:
            return self.text[start + 1 : i]

    def read_value(self, path: KeyPath) -> None:
        self.skip_blank(False)
        ch = self.peek()
        if ch == "{":
            self.pos += 1
            while True:
                self.skip_blank(True)
                if self.peek() == "}":
                    self.pos += 1
                    return
                if self.peek() == ",":
                    self.pos += 1
                    continue
                start = self.pos
                sub = self.read_key()
                self.record((*path, *sub), self.line(start))
                self.skip_blank(False)
                self.pos += 1  # "="
                self.read_value((*path, *sub))
        elif ch == "[":
            self.pos += 1
            index = 0
            while True:
                self.skip_blank(True)
                if self.peek() == "]":
                    self.pos += 1
                    return
                if self.peek() == ",":
                    self.pos += 1
                    continue
                self.record((*path, index), self.line())
                self.read_value((*path, index))
                index += 1
        elif ch in ('"', "'"):
            self.read_string()
        else:
            match = re.compile(r"[^,\]}\n#]*").match(self.text, self.pos)
            assert match is not None
            self.pos = match.end()

    def scan(self) -> dict[KeyPath, int]:
        table: KeyPath = ()
        while True:
            self.skip_blank(True)
            if self.pos >= len(self.text):
                return self.lines
            start = self.pos
            if self.peek() == "[":
                double = self.peek(2) == "[["
                self.pos += 2 if double else 1
                table = self.read_key()
                self.pos += 2 if double else 1
                self.record(table, self.line(start))
                continue
            key = self.read_key()
            self.record((*table, *key), self.line(start))
            self.skip_blank(False)
            self.pos += 1  # "="
            self.read_value((*table, *key))


def key_lines(text: str) -> dict[KeyPath, int]:
    """``{("mcp", "github", "timeout"): 7, ...}``: the 1-based line where each key path was
    first written (table headers included; array items get their index as a path part)."""
    scanner = _Scanner(text)
    try:
        return scanner.scan()
    except (ValueError, IndexError, AssertionError):
        return scanner.lines  # positions found so far; lines fall back to the parent's
