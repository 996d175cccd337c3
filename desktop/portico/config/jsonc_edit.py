"""Set or remove one member of a JSON-with-comments file's object, in place.

Everything else in the text stays as it was, byte for byte: comments, order, spacing,
trailing commas. Positions come from ``importers.jsonc.strip_jsonc`` (comments blanked,
same offsets), so a comment never looks like a key. A new member copies the indentation
of its siblings (or the object's own plus two spaces).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from portico.config.importers.jsonc import strip_jsonc


class JsoncEditError(ValueError):
    """The text is not the JSON object the edit expects (the message says where)."""


_WS = re.compile(r"\s*")
_NUMBER = re.compile(r"-?\d+(\.\d+)?([eE][+-]?\d+)?")


def _skip(text: str, i: int) -> int:
    match = _WS.match(text, i)
    return match.end() if match else i


def _string_end(text: str, i: int) -> int:
    j = i + 1
    while j < len(text):
        if text[j] == "\\":
            j += 2
            continue
        if text[j] == '"':
            return j + 1
        j += 1
    raise JsoncEditError(f"unterminated string at offset {i}")


def _value_end(text: str, i: int) -> int:
    c = text[i : i + 1]
    if c == '"':
        return _string_end(text, i)
    if c in "{[":
        closing = "}" if c == "{" else "]"
        j = _skip(text, i + 1)
        if text[j : j + 1] == closing:
            return j + 1
        while True:
            if c == "{":
                if text[j : j + 1] != '"':
                    raise JsoncEditError(f"expected a key at offset {j}")
                j = _skip(text, _string_end(text, j))
                if text[j : j + 1] != ":":
                    raise JsoncEditError(f"expected ':' at offset {j}")
                j = _skip(text, j + 1)
            j = _skip(text, _value_end(text, j))
            if text[j : j + 1] == ",":
                j = _skip(text, j + 1)
                if text[j : j + 1] == closing:  # a trailing comma (blanked already)
                    return j + 1
                continue
            if text[j : j + 1] == closing:
                return j + 1
            raise JsoncEditError(f"expected ',' or {closing!r} at offset {j}")
    for literal in ("true", "false", "null"):
        if text.startswith(literal, i):
            return i + len(literal)
    match = _NUMBER.match(text, i)
    if match:
        return match.end()
    raise JsoncEditError(f"unexpected character at offset {i}")


def _members(clean: str, start: int) -> list[tuple[str, int, int, int]]:
    """(key, key start, value start, value end) of the object that opens at ``start``."""
    out: list[tuple[str, int, int, int]] = []
    j = _skip(clean, start + 1)
    while clean[j : j + 1] == '"':
        key_end = _string_end(clean, j)
        key = json.loads(clean[j:key_end])
        colon = _skip(clean, key_end)
        value = _skip(clean, colon + 1)
        end = _value_end(clean, value)
        out.append((key, j, value, end))
        j = _skip(clean, end)
        if clean[j : j + 1] == ",":
            j = _skip(clean, j + 1)
    return out


def _object_at(clean: str, path: Sequence[str]) -> tuple[int, int] | None:
    """(open brace, end) of the object at ``path``, None if a key on it is missing."""
    start = _skip(clean, 0)
    if clean[start : start + 1] != "{":
        raise JsoncEditError("the file is not a JSON object")
    end = _value_end(clean, start)
    for key in path:
        found = [m for m in _members(clean, start) if m[0] == key]
        if not found:
            return None
        start, end = found[-1][2], found[-1][3]
        if clean[start : start + 1] != "{":
            raise JsoncEditError(f"{key!r} is not an object")
    return start, end


def _line_indent(text: str, i: int) -> str:
    line_start = text.rfind("\n", 0, i) + 1
    return re.match(r"[ \t]*", text[line_start:]).group(0)  # type: ignore[union-attr]


def _dump(value: Any, indent: str) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False).replace("\n", "\n" + indent)


def _insert(text: str, clean: str, start: int, end: int, key: str, value: Any) -> str:
    members = _members(clean, start)
    if members:
        indent = _line_indent(text, members[-1][1])
        last_end = members[-1][3]
        rest = _skip(clean, last_end)
        comma = "" if clean[rest : rest + 1] == "," else ","
        member = f"{comma}\n{indent}{json.dumps(key)}: {_dump(value, indent)}"
        return text[:last_end] + member + text[last_end:]
    outer = _line_indent(text, start)
    indent = outer + "  "
    member = f"\n{indent}{json.dumps(key)}: {_dump(value, indent)}\n{outer}"
    return text[: start + 1] + member + text[end - 1 :]


def set_member(text: str, path: Sequence[str], key: str, value: Any) -> str:
    """``text`` with ``path.key`` set to ``value`` (objects on ``path`` made as needed)."""
    if not text.strip():
        text = "{}\n"
    clean = strip_jsonc(text)
    for depth in range(len(path) + 1):
        found = _object_at(clean, path[:depth])
        if found is None:  # make the missing rest of the path around the value
            nested: Any = value
            for name in reversed((*path[depth - 1 :], key)[1:]):
                nested = {name: nested}
            parent = _object_at(clean, path[: depth - 1])
            assert parent is not None
            return _insert(text, clean, *parent, path[depth - 1], nested)
    start, end = _object_at(clean, path) or (0, 0)
    existing = [m for m in _members(clean, start) if m[0] == key]
    if existing:
        _k, key_start, value_start, value_end = existing[-1]
        indent = _line_indent(text, key_start)
        return text[:value_start] + _dump(value, indent) + text[value_end:]
    return _insert(text, clean, start, end, key, value)


def remove_member(text: str, path: Sequence[str], key: str) -> tuple[str, bool]:
    """``text`` without ``path.key`` (and its comma); False when it was not there."""
    if not text.strip():
        return text, False
    clean = strip_jsonc(text)
    found = _object_at(clean, path)
    if found is None:
        return text, False
    members = _members(clean, found[0])
    index = next((i for i, m in enumerate(members) if m[0] == key), None)
    if index is None:
        return text, False
    _k, key_start, _v, value_end = members[index]
    if index + 1 < len(members):  # up to the next member's key
        cut_from, cut_to = key_start, members[index + 1][1]
    elif index > 0:  # from the end of the previous value (its comma goes too)
        cut_from, cut_to = members[index - 1][3], value_end
        after = _skip(clean, value_end)
        if clean[after : after + 1] == ",":
            cut_to = after + 1
    else:
        cut_from, cut_to = _skip(clean, found[0] + 1), value_end
        after = _skip(clean, value_end)
        if clean[after : after + 1] == ",":
            cut_to = after + 1
    return text[:cut_from] + text[cut_to:], True
