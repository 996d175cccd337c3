"""An editable tree of a big config file that parses only the servers an edit touches.

``ConfigDocument.load`` uses it for files large enough that a round-trip parse of the
whole file is what an edit costs. A fast parser reads the whole file once
(``portico.config.spans``): that proves the file is well formed and says which lines
hold each server. A server that is read or edited gets a round-trip tree of its own lines
(``TomlTree``/``YamlTree`` with ``part=True``, under an ``mcp_servers:`` line in YAML);
``dumps`` splices the edited lines back between the untouched ones. The edits are the
same code as on a whole-file tree, so they write the same bytes; the property tests
compare the two on generated files.

Anything a part cannot answer alone (a setting, a rename or removal, a server whose lines
are not its own) goes to a tree of the whole current text, parsed then, and everything
after that goes there too. After each edit of a part, the part's text is checked
(it still parses, holds exactly its servers at their column, ends its last line): an
edit that reaches beyond its lines is made again on the whole file instead.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from portico.config import schema
from portico.config.edit_errors import EditError
from portico.config.model import Dialect
from portico.config.parse_count import counted
from portico.config.replay import lines_of
from portico.config.spans import Layout

if TYPE_CHECKING:
    from portico.config.document import Tree
    from portico.config.raw import KeyPath

YAML_PREFIX = "mcp_servers:\n"


def span_tree(dialect: Dialect, text: str, path: Path) -> SpanTree | None:
    """A SpanTree over ``text``, or None when the file's shape needs a whole-file tree."""
    if dialect is Dialect.TOML:
        from portico.config.toml_spans import toml_spans

        layout = toml_spans(text)
    else:
        from portico.config.yaml_spans import yaml_spans

        layout = yaml_spans(text)
    if layout is None:
        return None
    counted(path)  # the whole file's one parse
    return SpanTree(dialect, text, path, layout)


@dataclass
class _Part:
    """The round-trip tree of the lines ``start:end`` of the file (one server, and the
    servers added after it)."""

    start: int
    end: int
    tree: Tree
    servers: list[str]
    body: str  # the current text of those lines


class SpanTree:
    def __init__(self, dialect: Dialect, text: str, path: Path, layout: Layout) -> None:
        self.dialect = dialect
        self.path = path
        self.notes: list[str] = []
        self._text = text
        self._lines = lines_of(text)
        self._layout = layout
        self._parts: list[_Part] = []  # in file order
        self._owner: dict[str, _Part] = {}
        self._added: list[str] = []
        self._unsplit: set[str] = set()
        self._whole_tree: Tree | None = None
        self._indent: tuple[int, int, int] | None = None
        self._prefix = YAML_PREFIX if dialect is Dialect.YAML else ""

    # -- the Tree protocol -----------------------------------------------------------------

    def dumps(self) -> str:
        if self._whole_tree is not None:
            return self._whole_tree.dumps()
        if not self._parts:
            return self._text
        out: list[str] = []
        at = 0
        for part in self._parts:
            out.extend(self._lines[at : part.start])
            out.append(part.body)
            at = part.end
        out.extend(self._lines[at:])
        return "".join(out)

    def server_names(self) -> list[str]:
        if self._whole_tree is not None:
            return self._whole_tree.server_names()
        return [*self._layout.names, *self._added]

    def get(self, server: str, path: tuple[str, ...]) -> Any:
        part = self._part(server)
        if part is None:
            return self._whole().get(server, path)
        return part.tree.get(server, path)

    def set(self, server: str, path: tuple[str, ...], value: Any) -> None:
        self._edit(server, lambda tree: tree.set(server, path, value))

    def unset(self, server: str, path: tuple[str, ...]) -> bool:
        return bool(self._edit(server, lambda tree: tree.unset(server, path)))

    def add_server(self, name: str, fields: Mapping[str, Any]) -> None:
        tail = self._layout.tail
        if self._whole_tree is None and tail is not None and self._part(tail) is not None:
            self._edit(tail, lambda tree: tree.add_server(name, fields), added=name)
            return
        self._whole().add_server(name, fields)

    def replace_server(self, name: str, fields: Mapping[str, Any]) -> None:
        self._whole().replace_server(name, fields)

    def remove_server(self, name: str) -> None:
        self._whole().remove_server(name)

    def rename_server(self, old: str, new: str) -> None:
        self._whole().rename_server(old, new)

    def get_root(self, path: tuple[str, ...]) -> Any:
        if self._whole_tree is None and self.dialect is Dialect.TOML and path[:1] != ("mcp",):
            return _get_plain(self._layout.data, path)  # parts hold servers only
        return self._whole().get_root(path)

    def set_root(self, path: tuple[str, ...], value: Any) -> None:
        self._whole().set_root(path, value)

    def unset_root(self, path: tuple[str, ...]) -> bool:
        return self._whole().unset_root(path)

    def parse_value(self, text: str) -> Any:
        if self.dialect is Dialect.TOML:
            from portico.config.toml_edit import parse_value as toml_value

            return toml_value(text)
        from portico.config.yaml_edit import parse_value as yaml_value

        return yaml_value(text)

    def key_lines(self, names: Sequence[str]) -> dict[KeyPath, int]:
        parts = [self._part(name) for name in names if name in self.server_names()]
        if self._whole_tree is not None or any(part is None for part in parts):
            return self._whole().key_lines(names)
        lines: dict[KeyPath, int] = {}
        skip = self._prefix.count("\n")
        for name in names:
            part = self._owner.get(name)
            if part is None:
                continue
            shift = part.start - skip + self._shift_before(part)
            for key, line in part.tree.key_lines([name]).items():
                lines[key] = line + shift
        return lines

    # -- parts -------------------------------------------------------------------------------

    def _whole(self) -> Tree:
        """The tree of the whole current text (parsed on first use; used from then on)."""
        if self._whole_tree is None:
            text = self.dumps()
            tree: Tree
            if self.dialect is Dialect.TOML:
                from portico.config.toml_edit import TomlTree

                tree = TomlTree(text, self.path)
            else:
                from portico.config.yaml_edit import YamlTree

                tree = YamlTree(text, self.path)
            tree.notes = self.notes
            self._whole_tree = tree
            self._parts.clear()
            self._owner.clear()
        return self._whole_tree

    def _part(self, server: str) -> _Part | None:
        """The part holding ``server`` (parsed on first use); None: use the whole tree."""
        if self._whole_tree is not None:
            return None
        if server in self._owner:
            return self._owner[server]
        span = self._layout.spans.get(server)
        if span is None or server in self._unsplit:
            return None
        start, end = span
        body = "".join(self._lines[start:end])
        tree = self._part_tree(body)
        if (
            tree is None
            or tree.server_names() != [server]
            or (
                self.dialect is Dialect.TOML
                and tree.get(server, ()) != self._layout.data["mcp"][server]
            )
        ):
            self._unsplit.add(server)  # its lines do not read alone as they do in the file
            return None
        tree.notes = self.notes
        part = _Part(start, end, tree, [server], body)
        self._parts.append(part)
        self._parts.sort(key=lambda p: p.start)
        self._owner[server] = part
        return part

    def _part_tree(self, body: str) -> Tree | None:
        from portico.config.edit_errors import DocumentParseError

        try:
            if self.dialect is Dialect.TOML:
                from portico.config.toml_edit import TomlTree

                return TomlTree(body, self.path, part=True)
            from portico.config.yaml_edit import YamlTree, detect_indent

            if self._indent is None:
                self._indent = detect_indent(self._text)
            return YamlTree(
                self._prefix + body,
                self.path,
                part=True,
                indent=self._indent,
                separated=self._layout.separated,
            )
        except DocumentParseError:
            return None

    def _edit(self, server: str, edit: Callable[[Tree], Any], *, added: str | None = None) -> Any:
        """``edit`` on the part holding ``server``; on the whole tree when there is no such
        part, or when what the edit wrote is not a sound part of the file."""
        part = self._part(server)
        if part is None:
            return edit(self._whole())
        failed: EditError | None = None
        result: Any = None
        try:
            result = edit(part.tree)
        except EditError as exc:
            failed = exc
        text = part.tree.dumps()
        if text != self._prefix + part.body:
            servers = part.servers
            if added is not None and failed is None:
                servers = [*part.servers, added]
            if not self._sound(part, text, servers):
                # the whole tree is parsed from the text before this edit, and edited
                return edit(self._whole())
            part.body = text[len(self._prefix) :]
            if servers is not part.servers:
                part.servers.append(servers[-1])
                self._owner[servers[-1]] = part
                self._added.append(servers[-1])
        if failed is not None:
            raise failed
        return result

    def _sound(self, part: _Part, text: str, servers: list[str]) -> bool:
        """Whether ``text`` (a part after an edit) splices back into a well-formed file
        that holds ``servers`` on those lines and nothing else."""
        if not text.startswith(self._prefix):
            return False
        if part.end < len(self._lines) and not text.endswith("\n"):
            return False  # the next line would be glued onto its last one
        line_count = text.count("\n") + (0 if text.endswith("\n") else 1)
        if self.dialect is Dialect.TOML:
            from portico.config.toml_spans import toml_spans

            layout = toml_spans(text)
            return (
                layout is not None
                and list(layout.names) == servers
                and layout.tail == servers[-1]
                and all(name in layout.spans for name in servers)
                and layout.spans[servers[0]][0] == 0
            )
        from portico.config.yaml_spans import yaml_spans

        layout = yaml_spans(text)
        return (
            layout is not None
            and list(layout.names) == servers
            and layout.column == self._layout.column
            and layout.spans[servers[0]][0] == 1
            and layout.spans[servers[-1]][1] == line_count
        )

    def _shift_before(self, part: _Part) -> int:
        """How many lines the edits of the parts above ``part`` added (or removed)."""
        shift = 0
        for other in self._parts:
            if other is part:
                break
            shift += len(lines_of(other.body)) - (other.end - other.start)
        return shift


def _get_plain(data: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    """What ``TomlTree.get_root`` answers, from the plain data of the whole file."""
    node: Any = data
    logical: str | None = None
    for part in path:
        if not isinstance(node, Mapping):
            return None
        key, logical = schema.resolve_key(Dialect.TOML, node, logical, part)
        if key not in node:
            return None
        node = node[key]
    return node
