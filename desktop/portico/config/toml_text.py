"""Renaming and removing a server in ``mcp.toml`` text: nothing else moves.

A server may be written as ``[mcp.NAME]`` with sub-tables anywhere later in the file
(``[mcp.NAME.oauth]``), as dotted keys under ``[mcp]`` (``NAME.command = [...]``) or at the
top (``mcp.NAME.url = ...``), or as ``NAME = { ... }`` under ``[mcp]``. Every one of those
tokens is rewritten in place (keeping its quoting), so comments stay where they are; a
removal deletes exactly the lines of those places (see ``remove_in_text`` for which
comments go along).
"""

from __future__ import annotations

import re

from portico.config.replay import lines_of

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
    lines = lines_of(text)
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


def _is_comment(line: str) -> bool:
    return line.lstrip().startswith("#")


def _is_blank(line: str) -> bool:
    return not line.strip()


def remove_in_text(text: str, servers_key: str, name: str) -> str:
    """``text`` without server ``name``: each of its tables (``[mcp.NAME]``, sub-tables
    written anywhere) with its body and the comment block directly above it, and its
    dotted or inline keys under ``[mcp]`` (or ``mcp.NAME.*`` at the top) with the comment
    block directly above them. A comment block directly above the next table belongs to
    that table and stays; so does the file's own header comment."""
    lines = lines_of(text)
    headers: list[int] = []  # every table header line
    mine_headers: list[int] = []
    key_lines: list[tuple[int, int]] = []  # (first, last) lines of a key of ours
    table: tuple[str, ...] = ()
    depth = 0
    open_quote: str | None = None
    start_of_key: int | None = None
    for number, line in enumerate(lines):
        if open_quote is not None:
            if open_quote in line:
                change, open_quote = _depth_change(line[line.index(open_quote) + 3 :])
                depth = max(0, depth + change)
            if start_of_key is not None and depth == 0 and open_quote is None:
                key_lines.append((start_of_key, number))
                start_of_key = None
            continue
        stripped = line.lstrip()
        start = len(line) - len(stripped)
        if depth == 0 and stripped.startswith("["):
            double = stripped.startswith("[[")
            found = _key_parts(line, start + (2 if double else 1))
            headers.append(number)
            if found is not None:
                table = tuple(p[2] for p in found[0])
                if len(table) >= 2 and table[0] == servers_key and table[1] == name:
                    mine_headers.append(number)
        elif depth == 0 and stripped and not stripped.startswith("#"):
            found = _key_parts(line, start)
            if found is not None and found[1] < len(line) and line[found[1]] == "=":
                names = [p[2] for p in found[0]]
                ours = (table == () and names[:2] == [servers_key, name]) or (
                    table == (servers_key,) and names[0] == name
                )
                if ours and not (len(table) >= 2 and table[:2] == (servers_key, name)):
                    start_of_key = number
        change, open_quote = _depth_change(line)
        depth = max(0, depth + change)
        if start_of_key is not None and depth == 0 and open_quote is None:
            key_lines.append((start_of_key, number))
            start_of_key = None
    drop: set[int] = set()

    def lead(first: int) -> int:
        """The first line of the comment block directly above line ``first``."""
        at = first
        while at > 0 and _is_comment(lines[at - 1]) and not _is_blank(lines[at - 1]):
            at -= 1
        return first if at == 0 else at  # the file's header comment stays

    for header in mine_headers:
        following = next((h for h in headers if h > header), len(lines))
        end = following
        if following < len(lines):
            while end - 1 > header and _is_comment(lines[end - 1]):
                end -= 1  # the comment block above the next table is that table's
        while end - 1 > header and _is_blank(lines[end - 1]):
            end -= 1
        begin = lead(header)
        if begin > 0 and _is_blank(lines[begin - 1]):
            begin -= 1  # the blank line that separated it goes with it
        elif end < len(lines) and _is_blank(lines[end]):
            end += 1  # nothing separated it from above: the blank line below goes
        drop.update(range(begin, end))
    for first, last in key_lines:
        drop.update(range(lead(first), last + 1))
    return "".join(line for number, line in enumerate(lines) if number not in drop)
