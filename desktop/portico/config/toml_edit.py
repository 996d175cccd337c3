"""In-place edits of an ``mcp.toml`` tomlkit tree (used by ``ConfigDocument``).

tomlkit keeps every byte of what it parsed; the work here is to make edits look like a
person made them: a key set inside an inline table stays inline and keeps the table's
spacing style, new nested tables are written inline (``oauth = { client_id = "x" }``),
and a removed server takes the comment block directly above it along (see the ownership
rules in ``portico.config.document``).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypeGuard

import tomlkit
from tomlkit.container import Container, OutOfOrderTableProxy
from tomlkit.exceptions import ParseError, TOMLKitError
from tomlkit.items import AoT, Bool, Comment, InlineTable, Item, Null, Table, Whitespace

from portico.config import schema
from portico.config.edit_errors import DocumentParseError, EditError
from portico.config.model import Dialect
from portico.config.parse_count import counted, counted_span
from portico.config.raw import KeyPath
from portico.config.toml_dialect import describe_parse_error
from portico.config.toml_dialect import key_lines as toml_key_lines
from portico.config.toml_text import remove_in_text, rename_in_text

SERVERS = schema.TOML_SERVERS_KEY
_BARE = re.compile(r"^[A-Za-z0-9_-]+$")

TableLike = Table | InlineTable | Container | OutOfOrderTableProxy


def literal(value: Any) -> str:
    """``value`` written as a TOML value (inline tables spaced like ``{ a = 1 }``)."""
    if isinstance(value, Item):
        return value.as_string()
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        # JSON escapes are TOML escapes, except that TOML wants DEL escaped too
        return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(value, Mapping):
        if not value:
            return "{}"
        inner = ", ".join(f"{key_text(str(k))} = {literal(v)}" for k, v in value.items())
        return "{ " + inner + " }"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(literal(v) for v in value) + "]"
    raise EditError(f"cannot write a {type(value).__name__} value to TOML: {value!r}")


def key_text(key: str) -> str:
    return key if _BARE.match(key) else json.dumps(key, ensure_ascii=False)


def to_item(value: Any) -> Item:
    if isinstance(value, Item):
        return value
    return _parse_item(literal(value))


def _parse_item(text: str) -> Item:
    item = tomlkit.parse(f"v = {text}\n").item("v")
    if not isinstance(item, Item):  # an out-of-order table: never from a single `v = ...`
        raise TypeError(f"not a single TOML value: {text!r}")
    return item


def _plain(value: Any) -> Any:
    return value.unwrap() if hasattr(value, "unwrap") else value


def _is_table(value: Any) -> bool:
    return isinstance(value, (Table, InlineTable, OutOfOrderTableProxy, Container))


def parse_value(text: str) -> Any:
    """``text`` read as a TOML value (the text itself when it does not parse)."""
    try:
        item = _parse_item(text)
    except (ParseError, TOMLKitError):
        return text
    # strings, arrays and tables stay tomlkit items, so their quoting is kept
    return item.unwrap() if isinstance(item, Bool) else item


class TomlTree:
    """The round-trip tree of a whole ``mcp.toml``, or (``part``) of the lines of some of
    its servers' tables."""

    def __init__(self, text: str, path: Path, *, part: bool = False) -> None:
        self.path = path
        self._styles: dict[int, Style] = {}  # inline-table styles, taken before each edit
        self.notes: list[str] = []
        self._count = counted_span if part else counted
        self._count(path)
        try:
            self.doc = tomlkit.parse(text)
        except (ParseError, TOMLKitError) as exc:
            message, line, column = describe_parse_error(exc, text)
            raise DocumentParseError(path, f"not valid TOML: {message}", line, column) from None

    def key_lines(self, names: Sequence[str]) -> dict[KeyPath, int]:
        lines = toml_key_lines(self.dumps())
        wanted = set(names)
        return {
            p[1:]: n for p, n in lines.items() if len(p) > 1 and p[0] == SERVERS and p[1] in wanted
        }

    def dumps(self) -> str:
        return self.doc.as_string()

    def parse_value(self, text: str) -> Any:
        return parse_value(text)

    # -- servers -----------------------------------------------------------------------

    def _servers(self) -> Any:
        servers = self.doc.get(SERVERS)
        return servers if _is_table(servers) else None

    def server_names(self) -> list[str]:
        servers = self._servers()
        if servers is None:
            return []
        if isinstance(servers, (Table, InlineTable)):  # file order (a rename keeps its place)
            names = [k.key for k, v in servers.value.body if k is not None and _is_table(v)]
            return list(dict.fromkeys(names))
        return [str(k) for k in servers if _is_table(servers.get(k))]

    def _server(self, name: str) -> Any:
        servers = self._servers()
        if servers is None or not _is_table(servers.get(name)):
            raise EditError(f"{self.path}: no server named {name!r}")
        return servers[name]

    def get(self, server: str, path: tuple[str, ...]) -> Any:
        return self._get_in(self._server(server), path)

    def set(self, server: str, path: tuple[str, ...], value: Any) -> None:
        self._set_in(self._servers(), server, self._server(server), path, value, label=server)

    def unset(self, server: str, path: tuple[str, ...]) -> bool:
        return self._unset_in(self._servers(), server, self._server(server), path)

    def add_server(self, name: str, fields: Mapping[str, Any]) -> None:
        servers = self._servers()
        if servers is None:
            servers = tomlkit.table(is_super_table=True)
            self._ensure_trailing_newline()
            self.doc.append(SERVERS, servers)
        if isinstance(servers, InlineTable):
            servers[name] = to_item(dict(fields))
            self._restyle_inline(self.doc, SERVERS)
            return
        table = tomlkit.table()
        for key, value in fields.items():
            table.append(key, to_item(value))
        self._ensure_trailing_newline()
        if isinstance(servers, OutOfOrderTableProxy):
            # [mcp.x] tables and an [mcp] table written apart: the new table goes after the
            # first of them, with a blank line before what follows
            table.add(tomlkit.nl())
            servers[name] = table
            return
        servers.append(name, table)
        last = next((k for k, _ in reversed(self.doc.body) if k is not None), None)
        if last is not None and last.key != SERVERS:
            table.add(tomlkit.nl())  # a table follows the servers: keep a blank line before it

    def replace_server(self, name: str, fields: Mapping[str, Any]) -> None:
        """New fields for an existing server, written where (and under the comments
        where) the old entry was."""
        current = self._server(name)
        if _refillable(current, dict(fields)):
            self._styles = collect_styles(current)
            _refill(current, dict(fields))
            return
        servers = self._servers()
        servers[name] = to_item(dict(fields))
        if isinstance(servers, InlineTable):
            self._restyle_inline(self.doc, SERVERS)

    def remove_server(self, name: str) -> None:
        servers = self._servers()
        if not isinstance(servers, InlineTable):
            before = self.server_names()
            text = remove_in_text(self.dumps(), SERVERS, name)
            try:
                self._count(self.path)
                doc = tomlkit.parse(text)
            except (ParseError, TOMLKitError):
                doc = None
            if doc is not None:
                previous, self.doc = self.doc, doc
                if self.server_names() == [n for n in before if n != name]:
                    return
                self.doc = previous
        container = servers.value if isinstance(servers, Table) else None
        if container is None or isinstance(servers, InlineTable):
            del servers[name]
            if isinstance(servers, InlineTable):
                self._restyle_inline(self.doc, SERVERS)
            return
        _remove_with_comments(self.doc, container, name)

    def rename_server(self, old: str, new: str) -> None:
        servers = self._servers()
        if isinstance(servers, InlineTable):
            value = servers[old]
            items = [(k, v) for k, v in servers.value.body if k is not None]
            rebuilt = {(new if str(k) == old else str(k)): v for k, v in items}
            del value
            self.doc[SERVERS] = to_item(rebuilt)
            self._restyle_inline(self.doc, SERVERS)
            return
        before = self.server_names()
        text = rename_in_text(self.dumps(), SERVERS, old, new)
        failed = EditError(f"{self.path}: could not rename {old!r} here; rename it by hand")
        try:
            self._count(self.path)
            doc = tomlkit.parse(text)
        except (ParseError, TOMLKitError):
            raise failed from None
        previous, self.doc = self.doc, doc
        if self.server_names() != [new if n == old else n for n in before]:
            self.doc = previous
            raise failed

    # -- top level -----------------------------------------------------------------------

    def get_root(self, path: tuple[str, ...]) -> Any:
        return self._get_in(self.doc, path)

    def set_root(self, path: tuple[str, ...], value: Any) -> None:
        self._set_in(None, "", self.doc, path, value, label="")

    def unset_root(self, path: tuple[str, ...]) -> bool:
        return self._unset_in(None, "", self.doc, path)

    # -- generic walking -----------------------------------------------------------------

    def _get_in(self, node: Any, path: tuple[str, ...]) -> Any:
        logical: str | None = None
        for part in path:
            if not _is_table(node):
                return None
            key, logical = schema.resolve_key(Dialect.TOML, node, logical, part)
            if key not in node:
                return None
            node = node[key]
        return _plain(node)

    def _set_in(
        self,
        parent: Any,
        parent_key: str,
        node: Any,
        path: tuple[str, ...],
        value: Any,
        *,
        label: str,
    ) -> None:
        self._styles = collect_styles(node)
        # chain: (container, key) pairs from the server table down to the edited key
        chain: list[tuple[Any, str]] = [(parent, parent_key)] if parent is not None else []
        logical: str | None = None
        for depth, part in enumerate(path[:-1]):
            key, logical = schema.resolve_key(Dialect.TOML, node, logical, part)
            if key not in node:
                nested: Any = value
                for inner in reversed(schema.spelled(Dialect.TOML, logical, path[depth + 1 :])):
                    nested = {inner: nested}
                value = nested
                path = (*path[:depth], key)
                break
            child = node[key]
            if not _is_table(child):
                where = ".".join(x for x in (label, *path[: depth + 1]) if x)
                raise EditError(
                    f"{self.path}: {where} is a {type(_plain(child)).__name__}, not a table; "
                    "unset it first"
                )
            chain.append((node, key))
            node = child
        last, _ = schema.resolve_key(Dialect.TOML, node, logical, path[-1])
        existing = node.get(last) if last in node else None
        if _refillable(existing, value):
            _refill(existing, value)
        elif last in node:
            node[last] = to_item(value)
        else:
            _add_key(node, last, to_item(value))
        chain.append((node, last))
        self._restyle_chain(chain)

    def _unset_in(self, parent: Any, parent_key: str, node: Any, path: tuple[str, ...]) -> bool:
        self._styles = collect_styles(node)
        chain: list[tuple[Any, str]] = [(parent, parent_key)] if parent is not None else []
        logical: str | None = None
        for part in path[:-1]:
            key, logical = schema.resolve_key(Dialect.TOML, node, logical, part)
            if key not in node or not _is_table(node[key]):
                return False
            chain.append((node, key))
            node = node[key]
        last, _ = schema.resolve_key(Dialect.TOML, node, logical, path[-1])
        if last not in node:
            return False
        child = node[last]
        if isinstance(node, (Table, Container)) and _is_header(child):
            # a [header] table (a model provider) owns its comments as a server does
            _remove_with_comments(self.doc, node.value if isinstance(node, Table) else node, last)
        else:
            del node[last]
        chain.append((node, last))
        self._restyle_chain(chain)
        return True

    def _restyle_chain(self, chain: list[tuple[Any, str]]) -> None:
        """Re-render the outermost inline table that holds the edit, in its own style."""
        for container, key in chain:
            if isinstance(container, InlineTable):
                return  # handled by the level above
            child = container.get(key)
            if isinstance(child, InlineTable):
                self._restyle_inline(container, key)
                return

    def _restyle_inline(self, container: Any, key: str) -> None:
        table = container[key]
        container[key] = _parse_item(_render_inline(table, self._styles))

    def _ensure_trailing_newline(self) -> None:
        """A file without a final newline: give its last line one before appending."""
        text = self.doc.as_string()
        if not text or text.endswith("\n"):
            return
        flat: list[tuple[Container, int]] = []
        _flatten(self.doc, flat)
        for container, at in reversed(flat):
            item = container.body[at][1]
            if isinstance(item, Null):
                continue
            if isinstance(item, Whitespace):
                item._s += "\n"
            elif isinstance(item, Comment) or container.body[at][0] is not None:
                item.trivia.trail += "\n"
            else:
                continue
            if self.doc.as_string().endswith("\n"):
                return
        self.doc.add(tomlkit.nl())


def _refillable(existing: Any, value: Any) -> TypeGuard[Table]:
    return (
        isinstance(existing, Table)
        and not existing.is_super_table()
        and isinstance(value, Mapping)
        and not isinstance(value, Item)
    )


def _refill(table: Table, value: Mapping[str, Any]) -> None:
    """A [header] table given a whole new mapping: refill it in place, so its header, its
    place in the file and the comments at its end stay where they are."""
    stale = [k for k in table if k not in value]
    for key, inner in value.items():
        current = table.get(key) if key in table else None
        if _refillable(current, inner):
            _refill(current, inner)
        elif key in table:
            table[key] = to_item(inner)
        else:
            _add_key(table, key, to_item(inner))
    for old_key in stale:
        del table[old_key]


def _is_header(item: Any) -> bool:
    """A table written with its own ``[header]`` (or a super table of such tables)."""
    return isinstance(item, Table)


def _tail(container: Container) -> Container:
    """The container whose body is rendered last in ``container`` (the innermost last
    [header] table), where the comments above the next header in the file live."""
    while True:
        keyed = [item for k, item in container.body if k is not None]
        trailing = container.body and container.body[-1][0] is None
        if not keyed or trailing or not _is_header(keyed[-1]):
            return container
        container = keyed[-1].value


def _append_table(node: Table | Container, key: str, table: Table) -> None:
    """A new [header] table goes after everything in ``node``. What ends the last table
    there and belongs to the header that follows it in the file (the blank line before
    it, or the comment block directly above it) moves below the new table, and a blank
    line separates the new table from what precedes it."""
    container = node.value if isinstance(node, Table) else node
    tail = _tail(container)

    def trailing(kinds: tuple[type, ...]) -> list[tuple[Any, Item]]:
        taken: list[tuple[Any, Item]] = []
        while tail.body and tail.body[-1][0] is None and isinstance(tail.body[-1][1], kinds):
            taken.insert(0, tail.body.pop())
        return taken

    keyed = any(k is not None for k, _ in container.body)
    # comments with no key after them (a new file's header) stay on top, not below it
    moved = trailing((Whitespace, Null)) if keyed else []
    if not moved and keyed:
        moved = trailing((Comment, Null))
        if moved and tail.body and isinstance(tail.body[-1][1], Whitespace):
            moved.insert(0, (None, tomlkit.nl()))  # the blank line above the comments
    if tail.body and not isinstance(tail.body[-1][1], Whitespace):
        tail.append(None, tomlkit.nl())
    node.append(key, table)
    inner = _tail(table.value)
    for _k, item in moved:
        inner.append(None, item)


def _add_key(node: Any, key: str, item: Item) -> None:
    """Add a new key after the last plain value of a table, so trailing comments (which
    belong to what follows) stay below it and the key never lands under a sub-table.
    A [header] table goes after the tables already there (``_append_table``)."""
    if _is_header(item) and isinstance(node, OutOfOrderTableProxy) and node._tables:
        _append_table(node._tables[-1], key, item)  # type: ignore[arg-type]
        dict.__setitem__(node, key, item)
        return
    if _is_header(item) and isinstance(node, (Table, Container)):
        _append_table(node, key, item)  # type: ignore[arg-type]
        return
    if isinstance(node, OutOfOrderTableProxy) and node._tables:
        # a table whose sub-tables are written apart: the key goes into its own [header]
        first = node._tables[0]
        _add_key(first, key, item)
        dict.__setitem__(node, key, item)
        return
    if isinstance(node, Table):
        container = node.value
    elif isinstance(node, Container):
        container = node
    else:
        node[key] = item
        return
    body = container.body
    last_value = None
    first_table = None
    for index, (k, v) in enumerate(body):
        if k is None:
            continue
        is_header = isinstance(v, AoT) or (
            isinstance(v, Table) and not (v.is_super_table() and k.is_dotted())
        )
        if is_header:
            if first_table is None:
                first_table = index
        elif first_table is None:
            last_value = index
    if last_value is not None:
        # indent like its neighbour (keys of an indented [sub.table] are indented too)
        neighbour = body[last_value][1]
        if not isinstance(neighbour, Table) and not item.trivia.indent:
            item.trivia.indent = neighbour.trivia.indent
        at = last_value + 1
    elif first_table is not None:
        at = first_table
        while at > 0 and isinstance(body[at - 1][1], Comment):
            at -= 1
        if at == 0 and isinstance(node, Container) and body and isinstance(body[0][1], Comment):
            at = first_table  # keep the file's header comment on top
        if not isinstance(body[at][1], Whitespace):
            item.trivia.trail = "\n\n"
    elif isinstance(node, Table) and body:
        # a table without keys: the comments in its body belong to what follows
        at = 0
        item.trivia.indent = node.trivia.indent.rpartition("\n")[2]
    else:
        node.append(key, item)
        return
    if at >= len(body):
        node.append(key, item)
    else:
        container._insert_at(at, key, item)
        if isinstance(node, Table):
            dict.__setitem__(node, key, item)  # the table mirrors its container's keys


Style = tuple[bool, str]  # (spaced braces, the "=" with its spacing)


def _style_of(table: InlineTable) -> Style:
    rendered = table.as_string()
    sep = ""
    for k, _ in table.value.body:
        if k is not None:
            written = k.as_string()
            sep = written[len(written.rstrip()) :] + k.sep
            break
    return rendered.startswith("{ ") or rendered == "{}", sep or " = "


def collect_styles(node: Any, into: dict[int, Style] | None = None) -> dict[int, Style]:
    """The style of every inline table under ``node``, taken before an edit changes it."""
    styles = {} if into is None else into
    if isinstance(node, InlineTable):
        styles[id(node)] = _style_of(node)
    if isinstance(node, (Table, InlineTable, Container)):
        body = node.body if isinstance(node, Container) else node.value.body
        for _, child in body:
            collect_styles(child, styles)
    elif isinstance(node, AoT):
        for element in node.body:
            collect_styles(element, styles)
    return styles


def _render_inline(table: InlineTable, styles: dict[int, Style] | None = None) -> str:
    spaced, sep = (styles or {}).get(id(table)) or _style_of(table)
    entries: list[str] = []
    for k, v in table.value.body:
        if k is None:
            continue
        value = _render_inline(v, styles) if isinstance(v, InlineTable) else v.as_string().strip()
        entries.append(f"{k.as_string().strip()}{sep}{value}")
    if not entries:
        return "{}"
    if spaced:
        return "{ " + ", ".join(entries) + " }"
    return "{" + ", ".join(entries) + "}"


# -- removing a server with the comments it owns ---------------------------------------


def _flatten(container: Container, out: list[tuple[Container, int]]) -> None:
    """Every body entry in the order it is rendered."""
    for index, (_key, item) in enumerate(container.body):
        out.append((container, index))
        if isinstance(item, Table):
            _flatten(item.value, out)
        elif isinstance(item, AoT):
            for element in item.body:
                _flatten(element.value, out)


def _remove_with_comments(doc: Container, servers: Container, name: str) -> None:
    flat: list[tuple[Container, int]] = []
    _flatten(doc, flat)
    index = next(i for i, (k, _) in enumerate(servers.body) if k is not None and k.key == name)
    pos = next(i for i, (c, at) in enumerate(flat) if c is servers and at == index)
    item = servers.body[index][1]
    sub: list[tuple[Container, int]] = []
    if isinstance(item, Table):
        _flatten(item.value, sub)
    end = pos + 1 + len(sub)

    def entry(i: int) -> Item:
        container, at = flat[i]
        return container.body[at][1]

    # the comment block directly above the server's first rendered line (none when a
    # blank line, kept in the header's own indent, separates them)
    lead: list[int] = []
    j = pos - 1
    if item.trivia.indent.lstrip(" \t").startswith("\n"):
        j = -1
    while j >= 0:
        it = entry(j)
        if isinstance(it, Null) or (isinstance(it, Table) and it.is_super_table()):
            j -= 1
            continue
        if isinstance(it, Comment):
            lead.append(j)
            j -= 1
            continue
        break
    if lead and min(lead) == 0:
        lead = []  # the file's own header comment
    # a comment block at the very end of the server, directly above the next entry
    rescued: list[Item] = []
    if pos >= 0 and end < len(flat):
        k = end - 1
        while k > pos and isinstance(entry(k), (Comment, Null)):
            if isinstance(entry(k), Comment):
                rescued.insert(0, entry(k))
            k -= 1
    following = next(
        (entry(i) for i in range(end, len(flat)) if not isinstance(entry(i), (Null,))),
        None,
    )
    for i in lead:
        container, at = flat[i]
        container.body[at] = (None, Null())
    del servers[name]
    if rescued and following is not None and not isinstance(following, (Comment, Whitespace)):
        text = "".join(c.as_string() for c in rescued)
        target = _first_rendered(following)
        target.trivia.indent = text + target.trivia.indent
    if following is None and pos > 0:
        # the last entry went: drop the blank line that separated it from what precedes
        j = (min(lead) if lead else pos) - 1
        while j >= 0 and (_silent(entry(j))):
            j -= 1
        before = entry(j) if j >= 0 else None
        if isinstance(before, Whitespace) and before.s and before.s.strip("\n") == "":
            container, at = flat[j]
            container.body[at] = (None, Null())


def _silent(item: Item) -> bool:
    """Renders nothing of its own: a removed entry or a super table's (absent) header."""
    return isinstance(item, Null) or (isinstance(item, Table) and item.is_super_table())


def _first_rendered(item: Item) -> Item:
    """The item whose indent is the first text ``item`` renders (a super table renders no
    header: its first table's does)."""
    while True:
        if isinstance(item, AoT) and item.body:
            item = item.body[0]
        elif isinstance(item, Table) and item.is_super_table():
            first = next((v for k, v in item.value.body if k is not None), None)
            if first is None:
                return item
            item = first
        else:
            return item
