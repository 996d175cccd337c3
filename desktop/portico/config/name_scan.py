"""Server names of a config file read from its lines, without parsing the whole file.

An edit command needs the names of every config file (to find the one that defines a
server) but parses only the file it edits. The scan covers the shapes people write:
``[mcp.NAME]`` headers, dotted ``NAME.key = ...`` and ``NAME = { ... }`` under ``[mcp]``,
and a block ``mcp_servers:`` mapping in YAML. Anything it is not sure about (multi-line
strings, flow or aliased server maps, tabs, odd keys) returns None: parse the file then.
"""

from __future__ import annotations

import re

from portico.config.model import Dialect

_NAME = r"""(?:"([A-Za-z0-9_-]+)"|'([A-Za-z0-9_-]+)'|([A-Za-z0-9_-]+))"""
_YAML_SERVERS = re.compile(r"^mcp_servers\s*:\s*(#.*)?$")
_YAML_ENTRY = re.compile(rf"^( +){_NAME}\s*:(\s|$)")
TOML_HEADER = re.compile(r"^\s*\[\s*([^\[\]]*?)\s*\]\s*(#.*)?$")
_TOML_KEY = re.compile(rf"^\s*{_NAME}\s*(=|\.)\s*(\{{)?")
_TOML_TOP_KEY = re.compile(rf"^\s*mcp\s*\.\s*{_NAME}\s*[=.]")
_TOML_PART = re.compile(rf"^\s*{_NAME}\s*$")


def scan_names(text: str, dialect: Dialect) -> list[str] | None:
    """The server names ``text`` defines, in file order; None when a parse must decide."""
    if text.startswith("\ufeff"):
        text = text[1:]
    return _toml(text) if dialect is Dialect.TOML else _yaml(text)


def _pick(match: re.Match[str], first: int) -> str:
    return next(g for g in match.groups()[first : first + 3] if g is not None)


def _yaml(text: str) -> list[str] | None:
    lines = text.replace("\r\n", "\n").split("\n")
    top = [i for i, line in enumerate(lines) if line.startswith("mcp_servers")]
    if not top:
        return None if "mcp_servers" in text else []
    if len(top) > 1 or not _YAML_SERVERS.match(lines[top[0]]):
        return None
    if any(line.startswith(("---", "...", "%")) for line in lines[top[0] :]):
        return None
    names: list[str] = []
    column: int | None = None
    for line in lines[top[0] + 1 :]:
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if line.startswith("\t") or "\t" in line[: len(line) - len(line.lstrip())]:
            return None
        indent = len(line) - len(line.lstrip(" "))
        if indent == 0:
            break
        if column is None:
            column = indent
        if indent < column:
            return None
        if indent > column:
            continue
        match = _YAML_ENTRY.match(line)
        if match is None:
            return None
        rest = line[match.end() :].strip()
        if rest.startswith(("*", "&", "!")) or (rest and not rest.startswith(("{", "#"))):
            return None  # an alias, anchor, tag or a scalar: let the parser say what it is
        names.append(_pick(match, 1))
    return list(dict.fromkeys(names))


def _toml(text: str) -> list[str] | None:
    if "'''" in text or '"""' in text:
        return None
    names: list[str] = []
    table: tuple[str, ...] = ()
    depth = 0
    cut_lines = toml_lines(text.replace("\r\n", "\n"))
    if cut_lines is None:
        return None
    for line, bare in cut_lines:
        if depth == 0 and line.strip():
            header = TOML_HEADER.match(line)
            if line.lstrip().startswith("[["):
                parts = header_parts(line.strip()[2:].split("]]")[0])
                if parts is None or (parts and parts[0] == "mcp"):
                    return None
                table = tuple(parts)
            elif header:
                parts = header_parts(header.group(1))
                if parts is None:
                    return None
                table = tuple(parts)
                if len(parts) >= 2 and parts[0] == "mcp":
                    names.append(parts[1])
            elif table == () and re.match(r"^\s*[\"']?mcp[\"']?\s*=", line):
                return None  # mcp = { ... }: the parser reads it
            elif table == ():
                top = _TOML_TOP_KEY.match(line)
                if top:
                    names.append(_pick(top, 0))
            elif table == ("mcp",):
                key = _TOML_KEY.match(line)
                if key is None:
                    return None
                if key.group(4) == "." or key.group(5):
                    names.append(_pick(key, 0))
        depth += bare.count("[") + bare.count("{") - bare.count("]") - bare.count("}")
        if depth < 0:
            return None
    return list(dict.fromkeys(names))


def header_parts(header: str) -> list[str] | None:
    out: list[str] = []
    for part in header.split("."):
        match = _TOML_PART.match(part)
        if match is None:
            return None
        out.append(_pick(match, 0))
    return out


_TOML_STRIP = re.compile(r"""("[^"\\\n]*(?:\\.[^"\\\n]*)*"|'[^'\n]*')|#[^\n]*|["']""")


def toml_lines(text: str) -> list[tuple[str, str]] | None:
    """Every line of ``text`` without its comment, and that again with its strings
    emptied (quotes kept): one pass of a regular expression over the whole text, as this
    runs on every config file an edit command looks at. None if a line has an unclosed
    string."""
    kept: list[str] = []
    bare: list[str] = []
    at = 0
    for token in _TOML_STRIP.finditer(text):
        found = token.group()
        if token.group(1) is None:
            if found[0] != "#":
                return None  # a quote that is never closed on its line
            kept.append(text[at : token.start()])
            bare.append(text[at : token.start()])
        else:
            kept.append(text[at : token.end()])
            bare.append(text[at : token.start()] + found[0] + found[-1])
        at = token.end()
    kept.append(text[at:])
    bare.append(text[at:])
    return list(zip("".join(kept).split("\n"), "".join(bare).split("\n"), strict=True))
