"""The lines of each ``[mcp.NAME]`` server of an ``mcp.toml``, and a fast whole-file check.

Table headers are found by a line scan (strings and multi-line arrays skipped);
``tomllib`` parses the whole file (a fraction of tomlkit's round-trip parse) and must
agree on which servers there are. A server's lines run from its ``[mcp.NAME]`` header
to the next header that is not one of its sub-tables. None (parse the whole file) for
multi-line strings, an ``[mcp]`` table or ``mcp.NAME`` keys outside a header (servers
written as keys), arrays of server tables, line ends other than "\\n", or a file that
does not parse. A server whose sub-tables are written apart from it gets no span.
"""

from __future__ import annotations

import re
import tomllib

from portico.config.name_scan import TOML_HEADER, header_parts, toml_lines
from portico.config.spans import Layout

_ROOT_MCP_KEY = re.compile(r"""^\s*["']?mcp["']?\s*[.=]""")


def toml_spans(text: str) -> Layout | None:
    sections = _sections(text)
    if sections is None:
        return None
    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError):
        return None  # the round-trip parse says what is wrong, with line and column
    owners = [_owner(parts) for _line, parts in sections]
    names = tuple(dict.fromkeys(o for o in owners if o is not None))
    servers = data.get("mcp", {})
    if not isinstance(servers, dict) or list(servers) != list(names):
        return None  # a server tomllib reads differently from the headers: parse it all
    if any(not isinstance(entry, dict) for entry in servers.values()):
        return None
    line_count = text.count("\n") + (0 if text.endswith("\n") else 1)
    bounds = [line for line, _parts in sections] + [line_count]
    spans: dict[str, tuple[int, int]] = {}
    for name in names:
        mine = [i for i, owner in enumerate(owners) if owner == name]
        if mine != list(range(mine[0], mine[-1] + 1)):
            continue  # sub-tables written apart from the server
        if sections[mine[0]][1] != ("mcp", name):
            continue  # no [mcp.NAME] header of its own above its sub-tables
        spans[name] = (bounds[mine[0]], bounds[mine[-1] + 1])
    first = next((i for i, owner in enumerate(owners) if owner is not None), None)
    tail: str | None = None
    if first is not None and all(owner is not None for owner in owners[first:]):
        last = owners[-1]
        tail = last if last in spans else None
    return Layout(names=names, spans=spans, tail=tail, data=data)


def _owner(parts: tuple[str, ...]) -> str | None:
    return parts[1] if len(parts) >= 2 and parts[0] == "mcp" else None


def _sections(text: str) -> list[tuple[int, tuple[str, ...]]] | None:
    """(line, header parts) of every table header; None for the shapes named above."""
    if "'''" in text or '"""' in text or "\r" in text:
        return None
    sections: list[tuple[int, tuple[str, ...]]] = []
    depth = 0
    cut_lines = toml_lines(text)
    if cut_lines is None:
        return None
    for number, (line, bare) in enumerate(cut_lines):
        stripped = line.strip() if depth == 0 else ""
        if stripped:
            if stripped.startswith("[["):
                parts = header_parts(stripped[2:].split("]]")[0])
                if parts is None or parts[:1] == ["mcp"]:
                    return None
                sections.append((number, ("[[", *parts)))  # owned by no server
            elif stripped.startswith("["):
                header = TOML_HEADER.match(line)
                parts = header_parts(header.group(1)) if header else None
                if parts is None or parts == ["mcp"]:
                    return None
                sections.append((number, tuple(parts)))
            elif not sections and _ROOT_MCP_KEY.match(line):
                return None
        if "[" in bare or "{" in bare or "]" in bare or "}" in bare:
            depth += bare.count("[") + bare.count("{") - bare.count("]") - bare.count("}")
            if depth < 0:
                return None
    return sections if depth == 0 else None
