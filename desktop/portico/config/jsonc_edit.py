"""Set or remove one member of a JSON-with-comments file's object (or one element, found
by its id, of an array of objects), in place.

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
    unit = "\t" if indent.startswith("\t") else 2  # a tab-indented file stays tab-indented
    return json.dumps(value, indent=unit, ensure_ascii=False).replace("\n", "\n" + indent)


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


def _elements(clean: str, start: int) -> list[tuple[int, int]]:
    """(start, end) of each element of the array that opens at ``start``."""
    out: list[tuple[int, int]] = []
    j = _skip(clean, start + 1)
    while clean[j : j + 1] not in ("]", ""):
        end = _value_end(clean, j)
        out.append((j, end))
        j = _skip(clean, end)
        if clean[j : j + 1] == ",":
            j = _skip(clean, j + 1)
    return out


def _array_at(clean: str, path: Sequence[str]) -> tuple[int, int] | None:
    parent = _object_at(clean, path[:-1])
    if parent is None:
        return None
    found = [m for m in _members(clean, parent[0]) if m[0] == path[-1]]
    if not found:
        return None
    start, end = found[-1][2], found[-1][3]
    if clean[start : start + 1] != "[":
        raise JsoncEditError(f"{path[-1]!r} is not an array")
    return start, end


def _find(clean: str, elements: list[tuple[int, int]], id_key: str, ident: str) -> int | None:
    for index, (start, end) in enumerate(elements):
        if clean[start : start + 1] != "{":
            continue
        try:
            item = json.loads(clean[start:end])
        except ValueError:
            continue
        if item.get(id_key) == ident:
            return index
    return None


def set_element(text: str, path: Sequence[str], id_key: str, value: dict[str, Any]) -> str:
    """``text`` with the object of ``path``'s array whose ``id_key`` equals ``value``'s
    replaced by ``value``, or ``value`` appended (the array made as needed)."""
    if not text.strip():
        text = "{}\n"
    clean = strip_jsonc(text)
    found = _array_at(clean, path)
    if found is None:
        return set_member(text, path[:-1], path[-1], [value])
    start, end = found
    elements = _elements(clean, start)
    index = _find(clean, elements, id_key, value[id_key])
    if index is not None:
        e_start, e_end = elements[index]
        return text[:e_start] + _dump(value, _line_indent(text, e_start)) + text[e_end:]
    if elements:
        last_end = elements[-1][1]
        indent = _line_indent(text, elements[-1][0])
        rest = _skip(clean, last_end)  # a trailing comma is blank in ``clean``: it stays last
        comma = "" if clean[rest : rest + 1] == "," else ","
        return text[:last_end] + f"{comma}\n{indent}{_dump(value, indent)}" + text[last_end:]
    outer = _line_indent(text, start)
    indent = outer + "  "
    return text[: start + 1] + f"\n{indent}{_dump(value, indent)}\n{outer}" + text[end - 1 :]


def remove_element(text: str, path: Sequence[str], id_key: str, ident: str) -> tuple[str, bool]:
    """``text`` without the object of ``path``'s array whose ``id_key`` is ``ident``;
    False when there was none. An array left empty is written ``[]``."""
    if not text.strip():
        return text, False
    clean = strip_jsonc(text)
    found = _array_at(clean, path)
    if found is None:
        return text, False
    start, end = found
    elements = _elements(clean, start)
    index = _find(clean, elements, id_key, ident)
    if index is None:
        return text, False
    e_start, e_end = elements[index]
    if len(elements) == 1:
        after = _skip(clean, e_end)
        after = after + 1 if clean[after : after + 1] == "," else after
        if not (text[start + 1 : e_start] + text[after : end - 1]).strip():
            return text[: start + 1] + text[end - 1 :], True  # nothing else in it: []
        return text[:e_start] + text[after:], True
    if index + 1 < len(elements):
        return text[:e_start] + text[elements[index + 1][0] :], True
    cut_from, cut_to = elements[index - 1][1], e_end
    after = _skip(clean, e_end)
    if clean[after : after + 1] == ",":
        cut_to = after + 1
    return text[:cut_from] + text[cut_to:], True
