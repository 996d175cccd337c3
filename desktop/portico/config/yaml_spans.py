"""The lines of each server of a block-style ``config.yaml``, from libyaml's parser.

PyYAML's C parser reads the whole file in milliseconds (ruamel.yaml's round trip is
pure Python and takes hundreds on a file of 200 servers). Its events prove the file is
well formed and give the line of every server's key: a server's lines run from its key
to the next server's key (or the next top-level key, or the end of the file).

None (parse the whole file) without libyaml, or for any shape whose server lines do not
stand alone: anchors, aliases, merge keys, tags, directives or ``---``, a flow-style
``mcp_servers``, a server that is not a mapping, keys that are not plain strings (a
ruamel reader might read ``1`` and ``0x1`` as the same key) or that repeat, tabs, and
line breaks other than "\\n" (libyaml counts NEL and the Unicode separators as breaks).
"""

from __future__ import annotations

import re
from typing import Any

from portico.config.spans import Layout

SERVERS = "mcp_servers"
# characters on which libyaml and ruamel.yaml might not agree where a line ends or what
# is a space: tabs, CR, NEL, the Unicode line/paragraph separators, a BOM inside the text
_UNSAFE = re.compile("[\t\r\x85\u2028\u2029\ufeff]")
# a plain key every YAML 1.1 and 1.2 reader reads as this same string
_PLAIN_KEY = re.compile(r"^[^\W\d][\w.\-/]*$")
_NOT_STRING = re.compile(
    r"^(?:y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE"
    r"|on|On|ON|off|Off|OFF|null|Null|NULL)$"
)
_NULL = ("", "~", "null", "Null", "NULL")


def _parser() -> Any:
    """PyYAML's libyaml parser class, or None when it is not installed with libyaml."""
    try:
        import yaml
    except ImportError:
        return None
    if not getattr(yaml, "__with_libyaml__", False):
        return None
    return yaml


def yaml_spans(text: str) -> Layout | None:
    if _UNSAFE.search(text):
        return None
    yaml = _parser()
    if yaml is None:
        return None
    try:
        events = list(yaml.parse(text, Loader=yaml.CSafeLoader))
    except yaml.YAMLError:
        return None  # the round-trip parse says what is wrong, with line and column
    return _layout(events, text)


def _layout(events: list[Any], text: str) -> Layout | None:
    import yaml

    kinds = [type(e) for e in events]
    documents = kinds.count(yaml.DocumentStartEvent)
    if documents != 1 or len(events) < 5 or kinds[2] is not yaml.MappingStartEvent:
        return None  # empty, several documents, or a top level that is not a mapping
    start, end = events[1], events[-2]
    if start.explicit or start.version or start.tags or end.explicit:
        return None
    if events[2].flow_style:
        return None
    # every mapping on a stack: (keys seen, whether the next node is a key)
    stack: list[list[Any]] = []
    root_keys: list[tuple[str, int]] = []
    servers: list[tuple[str, int]] = []
    servers_at: int | None = None  # the depth of the mcp_servers mapping
    in_servers_value = False
    for event in events[2:-2]:
        kind = type(event)
        if kind is yaml.AliasEvent or getattr(event, "anchor", None) or getattr(event, "tag", None):
            return None
        top = stack[-1] if stack else None
        if kind is yaml.ScalarEvent:
            if top is not None and top[0] == "map" and top[2]:
                key = _key(event)
                if key is None or key in top[1]:
                    return None
                top[1].add(key)
                top[2] = False
                depth = len(stack)
                if depth == 1:
                    root_keys.append((key, event.start_mark.line))
                    in_servers_value = key == SERVERS
                elif depth == 2 and servers_at == 2:
                    servers.append((key, event.start_mark.line))
                continue
            if top is not None and top[0] == "map":
                top[2] = True
                if len(stack) == 1 and in_servers_value:
                    return None  # mcp_servers: a scalar (or empty)
                empty = event.style == "" and event.value in _NULL
                if len(stack) == 2 and servers_at == 2 and not empty:
                    return None  # a server that is a scalar: only a full parse says what
            continue
        if kind in (yaml.MappingStartEvent, yaml.SequenceStartEvent):
            if top is not None and top[0] == "map":
                if top[2]:
                    return None  # a mapping or list as a key
                top[2] = True
            is_map = kind is yaml.MappingStartEvent
            if len(stack) == 1 and in_servers_value:
                if not is_map or event.flow_style:
                    return None
                servers_at = 2
            elif len(stack) == 2 and servers_at == 2 and not is_map:
                return None  # a server written as a list
            stack.append(["map" if is_map else "seq", set(), True])
            continue
        if kind in (yaml.MappingEndEvent, yaml.SequenceEndEvent):
            stack.pop()
            if len(stack) == 1:
                if servers_at == 2:
                    servers_at = -1  # done with mcp_servers
                in_servers_value = False
            continue
        return None
    if not servers:
        return None
    return _spans(text, root_keys, servers)


def _key(event: Any) -> str | None:
    value: str = event.value
    if event.style:  # quoted: a string whatever it holds (block scalars are not keys)
        return value if event.style in ("'", '"') else None
    if not _PLAIN_KEY.match(value) or _NOT_STRING.match(value) or value == "<<":
        return None
    return value


def _spans(
    text: str, root_keys: list[tuple[str, int]], servers: list[tuple[str, int]]
) -> Layout | None:
    lines = text.split("\n")
    line_count = text.count("\n") + (0 if text.endswith("\n") else 1)
    at = next(i for i, (key, _line) in enumerate(root_keys) if key == SERVERS)
    header = lines[root_keys[at][1]]
    if not re.match(r"^mcp_servers\s*:\s*(#.*)?$", header):
        return None  # not `mcp_servers:` alone on its line at column 0
    block_end = root_keys[at + 1][1] if at + 1 < len(root_keys) else line_count
    column: int | None = None
    for _name, line in servers:
        indent = len(lines[line]) - len(lines[line].lstrip(" "))
        if column is None:
            column = indent
        if indent != column or indent == 0:
            return None
    starts = [line for _name, line in servers] + [block_end]
    spans = {name: (starts[i], starts[i + 1]) for i, (name, _line) in enumerate(servers)}
    separated = any(not lines[line - 1].strip() for _name, line in servers[1:])
    names = tuple(name for name, _line in servers)
    return Layout(names=names, spans=spans, tail=names[-1], separated=separated, column=column or 0)
