"""Renaming a server in ``mcp.toml`` text: only the name tokens change, nothing moves.

A server may be written as ``[mcp.NAME]`` with sub-tables anywhere later in the file
(``[mcp.NAME.oauth]``), as dotted keys under ``[mcp]`` (``NAME.command = [...]``) or at the
top (``mcp.NAME.url = ...``), or as ``NAME = { ... }`` under ``[mcp]``. Every one of those
tokens is rewritten in place (keeping its quoting), so comments stay where they are.
"""

from __future__ import annotations

import re

_BARE = re.compile(r"[A-Za-z0-9_-]+")

Token = tuple[int, int, str]  # start, end, the key part it spells


def _key_parts(line: str, at: int) -> tuple[list[Token], int] | None:
    """The dotted key starting at ``at`` (after spaces) and where it ends."""
    parts: list[Token] = []
    while True:
        while at < len(line) and line[at] in " \t":
            at += 1
        if at >= len(line):
            return None
        char = line[at]
        if char in "\"'":
            end = line.find(char, at + 1)
            while char == '"' and end > 0 and line[end - 1] == "\\":
                end = line.find(char, end + 1)
            if end < 0:
                return None
            parts.append((at, end + 1, line[at + 1 : end]))
            at = end + 1
        else:
            match = _BARE.match(line, at)
            if match is None:
                return None
            parts.append((at, match.end(), match.group(0)))
            at = match.end()
        while at < len(line) and line[at] in " \t":
            at += 1
        if at < len(line) and line[at] == ".":
            at += 1
            continue
        return parts, at


def _depth_change(line: str) -> tuple[int, str | None]:
    """Bracket depth change over ``line`` (strings and comment skipped), and the quote of a
    multi-line string left open at its end."""
    depth = 0
    at = 0
    while at < len(line):
        char = line[at]
        if line.startswith(('"""', "'''"), at):
            quote = line[at : at + 3]
            end = line.find(quote, at + 3)
            if end < 0:
                return depth, quote
            at = end + 3
            continue
        if char in "\"'":
            end = at + 1
            while end < len(line) and line[end] != char:
                end += 2 if char == '"' and line[end] == "\\" else 1
            at = end + 1
            continue
        if char == "#":
            break
        depth += {"[": 1, "{": 1, "]": -1, "}": -1}.get(char, 0)
        at += 1
    return depth, None


def rename_in_text(text: str, servers_key: str, old: str, new: str) -> str:
    """``text`` with every key token naming server ``old`` spelled ``new``."""
    lines = text.splitlines(keepends=True)
    table: tuple[str, ...] = ()
    depth = 0
    open_quote: str | None = None
    for number, line in enumerate(lines):
        if open_quote is not None:
            if open_quote in line:
                after = line[line.index(open_quote) + 3 :]
                change, open_quote = _depth_change(after)
                depth = max(0, depth + change)
            continue
        stripped = line.lstrip()
        start = len(line) - len(stripped)
        replace: Token | None = None
        if depth == 0 and stripped.startswith("["):
            double = stripped.startswith("[[")
            found = _key_parts(line, start + (2 if double else 1))
            if found is not None:
                parts, _ = found
                table = tuple(p[2] for p in parts)
                if len(parts) >= 2 and parts[0][2] == servers_key and parts[1][2] == old:
                    replace = parts[1]
        elif depth == 0 and stripped and not stripped.startswith("#"):
            found = _key_parts(line, start)
            if found is not None and found[1] < len(line) and line[found[1]] == "=":
                parts = found[0]
                names = [p[2] for p in parts]
                if table == () and len(parts) >= 2 and names[0] == servers_key and names[1] == old:
                    replace = parts[1]
                elif table == (servers_key,) and names[0] == old:
                    replace = parts[0]
        if replace is not None:
            begin, end, _ = replace
            token = line[begin:end]
            quote = token[0] if token[0] in "\"'" else ""
            lines[number] = line[:begin] + f"{quote}{new}{quote}" + line[end:]
        change, open_quote = _depth_change(line)
        depth = max(0, depth + change)
    return "".join(lines)
