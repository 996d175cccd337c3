"""In-place edits of a ``config.yaml`` (used by ``ConfigDocument``).

The text is the source of truth. Structural edits of block mappings (add or remove a key,
add, remove or rename a server, replace a nested value) are made on the lines themselves,
located with ruamel.yaml's line/column records, then the text is parsed again; that keeps
every other byte, which ruamel's dump alone cannot promise (it moves blank lines and
comments to the key before them). Scalar replacements and edits inside flow collections
(``{a: 1}``, ``[x, y]``) go through ruamel's round-trip tree and are replayed onto the
original text (``portico.config.replay``), so lines ruamel would re-emit differently stay
as they were. New blocks use the file's own indentation.
"""

from __future__ import annotations

import io
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.scalarstring import DoubleQuotedScalarString

from portico.config import schema
from portico.config.edit_errors import DocumentParseError, EditError
from portico.config.model import Dialect
from portico.config.name_scan import scan_names
from portico.config.parse_count import counted, counted_span
from portico.config.raw import KeyPath
from portico.config.replay import lines_of, replay
from portico.config.yaml_dialect import key_lines as yaml_key_lines

SERVERS = "mcp_servers"
_YAML_SERVERS = re.compile(r"^mcp_servers\s*:\s*(#.*)?$")
_ENTRY = re.compile(r"""^\s+(?:"([A-Za-z0-9_-]+)"|'([A-Za-z0-9_-]+)'|([A-Za-z0-9_-]+))\s*:""")
_KEY_LINE = re.compile(r"^(\s*)[^\s#\-][^#]*?:(\s|$)")
_SEQ_LINE = re.compile(r"^(\s*)- ")


def _load(text: str) -> Any:
    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    return yaml.load(text)


def plain(value: Any) -> Any:
    """ruamel's round-trip types as plain dict / list / str / int / float / bool."""
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, str):
        return str(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    return value


# What a plain scalar may not be, for any YAML 1.1 or 1.2 reader to read it back as the
# same string: a bool, null or number of either version, or text with an indicator.
_NOT_A_STRING = re.compile(
    r"""^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF
    |null|Null|NULL|~|=|<<
    |[-+]?(?:0b[01_]+|0o?[0-7_]+|0x[0-9a-fA-F_]+|[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?
    |(?:[0-9][0-9_]*)?\.?[0-9_]*(?:[eE][-+]?[0-9]+)?|\.(?:inf|Inf|INF))|\.(?:nan|NaN|NAN))$""",
    re.X,
)
_PLAIN_START = re.compile(r"""^(?:[^\s\-?:,\[\]{}#&*!|>'"%@`]|[-?:][^\s])""")
_PLAIN_SAFE = re.compile(r"^[\x21-\x7e\u00a0-\ud7ff\ue000-\ufffd ]*$")


def _plain_is_safe(text: str) -> bool:
    """Whether ``text`` written plain reads back as exactly this string, in block and flow
    context alike."""
    return bool(
        text
        and text == text.strip()
        and _PLAIN_START.match(text)
        and _PLAIN_SAFE.match(text)
        and not _NOT_A_STRING.match(text)
        and ": " not in text
        and " #" not in text
        and not text.endswith(":")
        and not any(c in text for c in ",[]{}")
    )


def _scalar(value: str) -> Any:
    if _plain_is_safe(value):
        return value
    return DoubleQuotedScalarString(value)


def _to_ruamel(value: Any) -> Any:
    if isinstance(value, (CommentedMap, CommentedSeq)):
        return value
    if isinstance(value, str) and type(value) is str:
        return _scalar(value)
    if isinstance(value, Mapping):
        out = CommentedMap()
        for k, v in value.items():
            out[str(k)] = _to_ruamel(v)
        return out
    if isinstance(value, (list, tuple)):
        seq = CommentedSeq(_to_ruamel(v) for v in value)
        if all(not isinstance(v, (Mapping, list, tuple)) for v in value):
            seq.fa.set_flow_style()
        return seq
    return value


def _flow(value: Any) -> Any:
    if isinstance(value, Mapping):
        out = CommentedMap()
        for k, v in value.items():
            out[str(k)] = _flow(v)
        out.fa.set_flow_style()
        return out
    if isinstance(value, (list, tuple)):
        seq = CommentedSeq(_flow(v) for v in value)
        seq.fa.set_flow_style()
        return seq
    return _to_ruamel(value)


def _flow_key(key: str) -> str:
    text = _flow_text(key)
    return text


def _flow_text(value: Any) -> str:
    """``value`` as one flow-style YAML value (``{A: x, B: [1, 2]}``)."""
    yaml = YAML(typ="rt")
    yaml.width = 1 << 20
    buf = io.StringIO()
    yaml.dump({"v": _flow(value)}, buf)
    return buf.getvalue().strip()[len("v:") :].strip()


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _blank(line: str) -> bool:
    return not line.strip()


def _comment(line: str) -> bool:
    return line.lstrip().startswith("#")


def _is_flow(node: Any) -> bool:
    return isinstance(node, (CommentedMap, CommentedSeq)) and node.fa.flow_style() is True


def detect_indent(text: str) -> tuple[int, int, int]:
    """(mapping indent, sequence indent, sequence dash offset) the file already uses."""
    lines = [line.rstrip("\n") for line in lines_of(text)]
    mapping = 0
    for line in lines:
        if _KEY_LINE.match(line) and not _comment(line):
            ind = _indent(line)
            if ind and (mapping == 0 or ind < mapping):
                mapping = ind
    mapping = mapping or 2
    offset: int | None = None
    previous = ""
    for line in lines:
        if _blank(line) or _comment(line):
            continue
        seq = _SEQ_LINE.match(line)
        if seq and previous.rstrip().endswith(":") and not _SEQ_LINE.match(previous):
            offset = max(0, _indent(line) - _indent(previous))
            break
        previous = line
    if offset is None:
        offset = mapping
    return mapping, offset + 2, offset


def parse_value(text: str) -> Any:
    """``text`` read as the value of a YAML key (the text itself when it does not parse)."""
    try:
        data = _load(f"v: {text}\n")
    except YAMLError:
        return text
    if not isinstance(data, CommentedMap) or "v" not in data:
        return text
    return data["v"]


class YamlTree:
    """The round-trip tree of a whole ``config.yaml``, or (``part``) of the lines of some
    of its servers under an ``mcp_servers:`` line; ``indent`` and ``separated`` then
    describe the whole file (``detect_indent``; whether blank lines separate servers)."""

    def __init__(
        self,
        text: str,
        path: Path,
        *,
        part: bool = False,
        indent: tuple[int, int, int] | None = None,
        separated: bool = False,
    ) -> None:
        self.path = path
        self.notes: list[str] = []
        self._part = part
        self._separated_elsewhere = separated
        self.mapping_indent, self.sequence_indent, self.offset = indent or detect_indent(text)
        self._set_text(text)

    # -- text and tree ---------------------------------------------------------------

    def _set_text(self, text: str) -> None:
        (counted_span if self._part else counted)(self.path)
        try:
            data = _load(text)
        except MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            problem = exc.problem or exc.context or "syntax error"
            line = mark.line + 1 if mark else None
            column = mark.column + 1 if mark else None
            raise DocumentParseError(
                self.path, f"not valid YAML: {problem}", line, column
            ) from None
        except YAMLError as exc:
            raise DocumentParseError(self.path, f"not valid YAML: {exc}") from None
        if data is None:
            data = CommentedMap()
        if not isinstance(data, CommentedMap):
            raise DocumentParseError(self.path, "the top level is not a mapping of keys")
        self.text = text
        self._data: CommentedMap | None = data

    @property
    def data(self) -> CommentedMap:
        """The round-trip tree of the current text (parsed again only when asked for after
        an edit of the lines)."""
        if self._data is None:
            self._set_text(self.text)
        assert self._data is not None
        return self._data

    def _stale(self) -> bool:
        return self._data is None

    def _lines(self) -> list[str]:
        return lines_of(self.text)

    def _write_lines(self, lines: list[str]) -> None:
        # the tree is parsed again when next needed: one edit, then a validation of the
        # edited server from its own lines (see ``get``), costs no second parse of the file
        self.text = "".join(lines)
        self._data = None

    def _dumper(self) -> YAML:
        yaml = YAML(typ="rt")
        yaml.preserve_quotes = True
        yaml.width = 4096
        yaml.indent(mapping=self.mapping_indent, sequence=self.sequence_indent, offset=self.offset)
        return yaml

    def _dump(self) -> str:
        buf = io.StringIO()
        self._dumper().dump(self.data, buf)
        return buf.getvalue()

    def _mutate(self, change: Any) -> None:
        """Edit through ruamel's tree, keeping unrelated lines exactly as they were."""
        base = self._dump()
        change()
        edited = self._dump()
        self._set_text(replay(self.text, base, edited))

    def _render(self, mapping: Mapping[str, Any], column: int) -> list[str]:
        buf = io.StringIO()
        self._dumper().dump(_to_ruamel(mapping), buf)
        pad = " " * column
        return [pad + line if line.strip() else line for line in lines_of(buf.getvalue())]

    def dumps(self) -> str:
        return self.text

    def key_lines(self, names: Sequence[str]) -> dict[KeyPath, int]:
        servers = self._servers()
        lines: dict[KeyPath, int] = {}
        if not isinstance(servers, CommentedMap):
            return lines
        for name in names:
            if name in servers:
                lines[(name,)] = servers.lc.key(name)[0] + 1
                lines.update(yaml_key_lines(servers[name], (name,)))
        return lines

    def parse_value(self, text: str) -> Any:
        return parse_value(text)

    # -- spans ---------------------------------------------------------------------------

    def _span(self, node: CommentedMap, key: Any) -> tuple[int, int, int, int]:
        """(first line, end of content, end of region, column) of ``key`` in a block map.

        The region runs up to the next key; its trailing blank lines and the comments not
        indented deeper than the key belong to what follows, so content ends before them.
        """
        lines = self._lines()
        start, column = node.lc.key(key)
        keys = _own(node)
        at = keys.index(key)
        if at + 1 < len(keys):
            region = node.lc.key(keys[at + 1])[0]
        else:
            region = len(lines)
            for ln in range(start + 1, len(lines)):
                line = lines[ln]
                if _blank(line) or _comment(line):
                    continue
                ind = _indent(line)
                closing = line.lstrip().startswith(("}", "]"))  # of a flow map over lines
                if ind < column or (ind == column and not _SEQ_LINE.match(line) and not closing):
                    region = ln
                    break
        end = region
        while end > start + 1 and (
            _blank(lines[end - 1])
            or (_comment(lines[end - 1]) and _indent(lines[end - 1]) <= column)
        ):
            end -= 1
        return start, end, region, column

    # -- walking -------------------------------------------------------------------------

    def _servers(self) -> Any:
        return self.data.get(SERVERS)

    def server_names(self) -> list[str]:
        if self._stale():
            scanned = scan_names(self.text, Dialect.YAML)
            if scanned is not None:
                return scanned
        servers = self._servers()
        if not isinstance(servers, CommentedMap):
            return []
        return [str(k) for k, v in servers.items() if v is None or isinstance(v, CommentedMap)]

    def _server_path(self, server: str, path: tuple[str, ...]) -> tuple[str, ...]:
        return (SERVERS, server, *path)

    def _walk(
        self, path: tuple[str, ...], logical_from: int, *, merged: bool = False
    ) -> tuple[list[tuple[CommentedMap, str]], int]:
        """The (map, key) chain along ``path`` as far as it exists, and how far that is."""
        node: Any = self.data
        chain: list[tuple[CommentedMap, str]] = []
        logical: str | None = None
        for depth, part in enumerate(path):
            if not isinstance(node, CommentedMap):
                return chain, depth
            if depth >= logical_from:
                key, logical = schema.resolve_key(Dialect.YAML, node, logical, part)
            else:
                key = part
            chain.append((node, key))
            if key not in (node if merged else _own(node)):
                return chain, depth
            node = node[key]
        return chain, len(path)

    def get(self, server: str, path: tuple[str, ...]) -> Any:
        if self._stale() and not path:
            entry = self._entry_from_lines(server)
            if entry is not None:
                return entry
        return self._get(self._server_path(server, path), 2)

    def _entry_from_lines(self, server: str) -> Any:
        """``server``'s entry read from its own lines (None when only a parse of the whole
        file can say: anchors, aliases, tags, or a layout the line scan is not sure of)."""
        lines = self._lines()
        top = next((i for i, ln in enumerate(lines) if _YAML_SERVERS.match(ln)), None)
        if top is None:
            return None
        column: int | None = None
        start: int | None = None
        end = len(lines)
        for number in range(top + 1, len(lines)):
            line = lines[number]
            if _blank(line) or _comment(line):
                continue
            indent = _indent(line)
            if column is None:
                column = indent
            if indent < (column or 1):
                end = number
                break
            if indent == column:
                if start is not None:
                    end = number
                    break
                entry = _ENTRY.match(line)
                if entry and server in entry.groups():
                    start = number
        if start is None:
            return None
        block = "".join(lines[start:end])
        if re.search(r"[&*!]|<<", block):
            return None
        try:
            data = _load("mcp_servers:\n" + block)
        except YAMLError:
            return None
        if not isinstance(data, CommentedMap) or not isinstance(data.get(SERVERS), Mapping):
            return None
        servers = data[SERVERS]
        return plain(servers[server]) if server in servers else None

    def get_root(self, path: tuple[str, ...]) -> Any:
        return self._get(path, len(path))

    def _get(self, path: tuple[str, ...], logical_from: int) -> Any:
        chain, reached = self._walk(path, logical_from, merged=True)
        if reached < len(path):
            return None
        node, key = chain[-1]
        return plain(node[key])

    # -- set / unset -----------------------------------------------------------------------

    def set(self, server: str, path: tuple[str, ...], value: Any) -> None:
        self._set(self._server_path(server, path), value, 2)

    def set_root(self, path: tuple[str, ...], value: Any) -> None:
        self._set(path, value, len(path))

    def _set(self, path: tuple[str, ...], value: Any, logical_from: int) -> None:
        self._unshare(path, logical_from)
        chain, reached = self._walk(path, logical_from)
        node, key = chain[-1]
        # walked into a scalar: only a null may be replaced by a table
        if reached < len(path) and key in _own(node) and node[key] is not None:
            shown = [k for _, k in chain][1 if logical_from == 2 else 0 :]
            raise EditError(
                f"{self.path}: {'.'.join(shown)} is a {type(plain(node[key])).__name__}, "
                "not a table; unset it first"
            )
        nested = value
        for part in reversed(_spelled(path, logical_from)[len(chain) :]):
            nested = {part: nested}
        if reached == len(path) or key in _own(node):
            self._replace(node, key, nested)
        else:
            self._insert(node, key, nested)

    def _insert(self, node: CommentedMap, key: str, value: Any) -> None:
        if _is_flow(node) and _own(node) and self._flow_insert(node, key, value):
            return
        if _is_flow(node) or (not _own(node) and node is not self.data):
            self._mutate(lambda: node.__setitem__(key, _to_ruamel(value)))
            return
        lines = self._lines()
        if not _own(node):  # an empty document (comments only)
            if lines and not lines[-1].endswith("\n"):
                lines[-1] += "\n"
            if any(not _blank(line) for line in lines):
                lines.append("\n")
            lines.extend(self._render({key: value}, 0))
            self._write_lines(lines)
            return
        last = _own(node)[-1]
        _, end, _, column = self._span(node, last)
        if end > 0 and not lines[end - 1].endswith("\n"):
            lines[end - 1] += "\n"
        block = self._render({key: value}, column)
        if node is self.data and isinstance(value, Mapping):
            if end > 0 and not _blank(lines[end - 1]):
                block = ["\n", *block]  # a new top-level section
        elif node is self._servers() and self._separated(node):
            block = ["\n", *block]
        lines[end:end] = block
        self._write_lines(lines)

    def _separated(self, node: CommentedMap) -> bool:
        """Whether the entries of ``node`` are separated by blank lines."""
        if self._separated_elsewhere:
            return True
        lines = self._lines()
        keys = _own(node)
        for key in keys[1:]:
            start = node.lc.key(key)[0]
            if start > 0 and _blank(lines[start - 1]):
                return True
        return False

    def _replace(self, node: CommentedMap, key: str, value: Any) -> None:
        old = node[key]
        scalar_old = not isinstance(old, (CommentedMap, CommentedSeq)) and old is not None
        scalar_new = not isinstance(value, (Mapping, list, tuple))
        if (_is_flow(node) or (scalar_old and scalar_new)) and self._token_replace(
            node, key, value
        ):
            return
        if _is_flow(node) or (scalar_old and scalar_new):
            line_no = node.lc.key(key)[0]
            before = self._lines()[line_no]
            self._mutate(lambda: node.__setitem__(key, _to_ruamel(value)))
            self._keep_comment_gap(line_no, before)
            return
        lines = self._lines()
        start, end, _, column = self._span(node, key)
        block = self._render({key: value}, column)
        block[0] = lines[start][:column] + block[0][column:]
        comment_at = _comment_start(lines[start])
        if end == start + 1 and len(block) == 1 and comment_at is not None:
            # one line for one line (a flow list, say): the comment on it stays
            old_line = lines[start]
            gap = old_line[:comment_at][len(old_line[:comment_at].rstrip()) :]
            block[0] = block[0].rstrip("\n") + gap + old_line[comment_at:]
            if not block[0].endswith("\n"):
                block[0] += "\n"
        lines[start:end] = block
        self._write_lines(lines)

    def _keep_comment_gap(self, line_no: int, before: str) -> None:
        """ruamel keeps an end-of-line comment's column; keep its distance instead."""
        lines = self._lines()
        if line_no >= len(lines):
            return
        after = lines[line_no]
        old_at, new_at = _comment_start(before), _comment_start(after)
        if old_at is None or new_at is None:
            return
        gap = len(before[:old_at]) - len(before[:old_at].rstrip())
        fixed = after[:new_at].rstrip() + " " * gap + after[new_at:]
        if fixed != after:
            lines[line_no] = fixed
            self._write_lines(lines)

    def unset(self, server: str, path: tuple[str, ...]) -> bool:
        return self._unset(self._server_path(server, path), 2)

    def unset_root(self, path: tuple[str, ...]) -> bool:
        return self._unset(path, len(path))

    def _unset(self, path: tuple[str, ...], logical_from: int) -> bool:
        self._unshare(path, logical_from)
        chain, reached = self._walk(path, logical_from)
        if reached < len(path):
            return False
        node, key = chain[-1]
        if _is_flow(node):
            if not self._flow_remove(node, key):
                self._mutate(lambda: node.__delitem__(key))
            return True
        lines = self._lines()
        start, end, _, _ = self._span(node, key)
        if len(_own(node)) == 1 and len(chain) >= 2:
            # the map becomes empty: write it as {} rather than leave a null behind
            del lines[start:end]
            self._write_lines(lines)
            self._make_empty_map([k for _, k in chain[:-1]])
            return True
        del lines[start:end]
        self._write_lines(lines)
        return True

    def _make_empty_map(self, keys: list[str]) -> None:
        """``key:`` (left without a value) -> ``key: {}``, keeping a comment on that line."""
        node: Any = self.data
        for part in keys[:-1]:
            node = node[part]
        if not isinstance(node, CommentedMap) or keys[-1] not in node:
            return
        lines = self._lines()
        line_no = node.lc.key(keys[-1])[0]
        line = lines[line_no]
        body, newline = (line[:-1], "\n") if line.endswith("\n") else (line, "")
        match = re.match(r"^(.*?:)(\s*)(#.*)?$", body)
        if match is None or node[keys[-1]] is not None:
            return
        head, space, comment = match.group(1), match.group(2), match.group(3)
        lines[line_no] = f"{head} {{}}{(space or ' ') + comment if comment else ''}{newline}"
        self._write_lines(lines)

    # -- flow maps, edited as text (their layout and comments stay) ---------------------

    def _value_end(self, line_no: int, at: int) -> tuple[int, int] | None:
        """Where the flow value starting at (line_no, at) ends (exclusive)."""
        lines = self._lines()
        line = lines[line_no]
        if at >= len(line):
            return None
        char = line[at]
        if char in "\"'":
            end = at + 1
            while end < len(line):
                if char == '"' and line[end] == "\\":
                    end += 2
                    continue
                if line[end] == char:
                    if char == "'" and line[end + 1 : end + 2] == "'":
                        end += 2
                        continue
                    return line_no, end + 1
                end += 1
            return None  # a quoted scalar over several lines: leave it to ruamel
        if char in "[{":
            depth, ln, pos, quote = 0, line_no, at, ""
            while ln < len(lines):
                text = lines[ln]
                while pos < len(text):
                    c = text[pos]
                    if quote:
                        if c == quote:
                            quote = ""
                    elif c in "\"'":
                        quote = c
                    elif c == "#" and pos > 0 and text[pos - 1] in " \t":
                        break
                    elif c in "[{":
                        depth += 1
                    elif c in "]}":
                        depth -= 1
                        if depth == 0:
                            return ln, pos + 1
                    pos += 1
                ln, pos = ln + 1, 0
            return None
        match = re.compile(r"[^,\]}\n]*?(?=\s+#|\s*[,\]}\n]|\s*$)").match(line, at)
        if match is None or not match.group(0):
            return None
        return line_no, match.end()

    def _token_replace(self, node: CommentedMap, key: Any, value: Any) -> bool:
        """Replace the written value of ``key`` by ``value``'s text, all else untouched;
        False when the value's text is not certain (block scalars, multi-line scalars)."""
        line_no, at, _rest = self._after_key(node, key)
        end = self._value_end(line_no, at)
        if end is None:
            return False
        lines = self._lines()
        end_line, end_col = end
        old = "".join(lines[line_no : end_line + 1])[at:]
        old = old[: len(old) - (len(lines[end_line]) - end_col)]
        if old.startswith(("|", ">", "&", "*", "!")):
            return False
        if end_line == line_no and not _is_flow(node):
            following = lines[line_no + 1] if line_no + 1 < len(lines) else ""
            key_column = node.lc.key(key)[1]
            if following.strip() and not _comment(following) and _indent(following) > key_column:
                return False  # a plain scalar continued on the next line
        try:
            read = _load(f"v: {old}\n")
        except YAMLError:
            return False
        if not isinstance(read, CommentedMap) or plain(read.get("v")) != plain(node[key]):
            return False
        new = lines[line_no][:at] + _flow_text(value) + lines[end_line][end_col:]
        lines[line_no : end_line + 1] = [new]
        self._write_lines(lines)
        return True

    def _flow_insert(self, node: CommentedMap, key: str, value: Any) -> bool:
        last = _own(node)[-1]
        line_no, at, _rest = self._after_key(node, last)
        end = self._value_end(line_no, at)
        if end is None:
            return False
        lines = self._lines()
        end_line, end_col = end
        # the next significant character after the last value: "," or "}"
        ln, pos = end_line, end_col
        while ln < len(lines):
            rest = lines[ln][pos:]
            stripped = rest.lstrip(" \t")
            if stripped and not stripped.startswith(("#", "\n")):
                pos += len(rest) - len(stripped)
                break
            ln, pos = ln + 1, 0
        else:
            return False
        entry = f"{_flow_key(key)}: {_flow_text(value)}"
        closing = lines[ln][pos]
        indent = " " * node.lc.key(last)[1]
        if closing == "}" and ln == end_line:
            # "}" right after the last value: {a: 1} -> {a: 1, k: v}
            line = lines[ln]
            lines[ln] = line[:end_col] + f", {entry}" + line[end_col:]
        elif closing == ",":
            # entries on lines of their own, each with a comma: one more like them
            lines.insert(ln + 1, f"{indent}{entry},\n")
        elif closing == "}":
            line = lines[end_line]
            lines[end_line] = line[:end_col] + "," + line[end_col:]
            lines.insert(end_line + 1, f"{indent}{entry}\n")
        else:
            return False
        self._write_lines(lines)
        return True

    def _flow_remove(self, node: CommentedMap, key: Any) -> bool:
        line_no, column = node.lc.key(key)
        _ln, at, _rest = self._after_key(node, key)
        end = self._value_end(line_no, at)
        if end is None:
            return False
        lines = self._lines()
        end_line, end_col = end
        line = lines[line_no]
        tail = lines[end_line][end_col:]
        comma = re.match(r"\s*,\s*", tail)
        alone_before = not line[:column].strip()
        if alone_before and (comma or not tail.strip(" \t\n").startswith("}")):
            # the entry has its line(s) to itself: drop them (a comment on them goes too)
            rest = tail[comma.end() :] if comma else tail
            if rest.strip() and not rest.lstrip().startswith("#"):
                lines[line_no : end_line + 1] = [line[:column] + rest]
            else:
                del lines[line_no : end_line + 1]
            keys = _own(node)
            if comma is None and keys.index(key) > 0:
                # the map writes no comma after its last entry: neither does the new last
                self._drop_comma_after(lines, node, keys[keys.index(key) - 1])
        elif comma:
            lines[line_no : end_line + 1] = [line[:column] + tail[comma.end() :]]
        else:
            # the last entry: drop it with the comma before it
            head = line[:column]
            cut = re.search(r",\s*$", head)
            if cut is None:
                return False
            lines[line_no : end_line + 1] = [head[: cut.start()] + tail]
        self._write_lines(lines)
        return True

    def _drop_comma_after(self, lines: list[str], node: CommentedMap, key: Any) -> None:
        line_no, at, _rest = self._after_key(node, key)
        end = self._value_end(line_no, at)
        if end is None:
            return
        end_line, end_col = end
        line = lines[end_line]
        comma = re.match(r"[ \t]*,", line[end_col:])
        if comma:
            lines[end_line] = line[:end_col] + line[end_col + comma.end() :]

    # -- anchors and aliases ---------------------------------------------------------------

    def _unshare(self, path: tuple[str, ...], logical_from: int) -> None:
        """Give the edited entry its own copy of every shared map the edit goes through.

        A map reached through an alias (``env: *env``) or a merge (``<<: *defaults``) is
        shared: editing it in place would change every entry that uses it. It is copied
        into the entry first (and a note says so). An anchored map of this entry that
        others use (``env: &env``) is refused: which of them should change is not clear.
        """
        if logical_from != 2:
            return
        for _ in range(len(path) + 2):
            chain, _reached = self._walk(path, logical_from, merged=True)
            where = [k for _, k in chain]
            for depth in range(1, len(chain) - 1):
                parent, key = chain[depth]
                label = ".".join(where[1 : depth + 1])
                if key not in _own(parent):  # through a merge key
                    self._insert(parent, key, plain(parent[key]))
                    self.notes.append(
                        f"{label} came from a merged anchor (<<: *...); {where[1]} now has "
                        "its own copy of it, the other entries are unchanged"
                    )
                    break
                line_no, at, rest = self._after_key(parent, key)
                if rest.startswith("*"):
                    alias = re.match(r"\*([^\s,\]}]+)", rest)
                    name = alias.group(1) if alias else ""
                    lines = self._lines()
                    line = lines[line_no]
                    lines[line_no] = (
                        line[:at] + _flow_text(plain(parent[key])) + line[at + len(name) + 1 :]
                    )
                    self._write_lines(lines)
                    self.notes.append(
                        f"{label} was the alias *{name}; {where[1]} now has its own copy, "
                        f"the other entries using *{name} are unchanged"
                    )
                    break
                if rest.startswith("&"):
                    anchor = re.match(r"&([^\s,\]}]+)", rest)
                    name = anchor.group(1) if anchor else ""
                    if re.search(r"\*" + re.escape(name) + r"(?![^\s,\]}])", self.text):
                        raise EditError(
                            f"{self.path}: {label} is the anchor &{name}, which other entries "
                            f"use (*{name}); editing it would change them too, so edit the "
                            "file by hand"
                        )
            else:
                return

    def _after_key(self, node: CommentedMap, key: Any) -> tuple[int, int, str]:
        """(line, column, text) of what follows ``key:`` on its line."""
        line_no, column = node.lc.key(key)
        line = self._lines()[line_no]
        match = re.compile(r"""("(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^:]*?)\s*:\s*""").match(
            line, column
        )
        at = match.end() if match else column
        return line_no, at, line[at:]

    # -- servers ---------------------------------------------------------------------------

    def add_server(self, name: str, fields: Mapping[str, Any]) -> None:
        servers = self._servers()
        if SERVERS not in self.data:
            self._insert(self.data, SERVERS, {name: dict(fields)})
            return
        if servers is None:
            lines = self._lines()
            line_no = self.data.lc.key(SERVERS)[0]
            block = self._render({name: dict(fields)}, self.mapping_indent)
            lines[line_no + 1 : line_no + 1] = block
            self._write_lines(lines)
            return
        if not isinstance(servers, CommentedMap):
            raise EditError(f"{self.path}: {SERVERS} is not a mapping of servers; fix it by hand")
        if _is_flow(servers) and len(servers) == 0:
            lines = self._lines()
            line_no, column = self.data.lc.key(SERVERS)
            lines[line_no] = re.sub(r":\s*\{\s*\}", ":", lines[line_no], count=1)
            block = self._render({name: dict(fields)}, column + self.mapping_indent)
            lines[line_no + 1 : line_no + 1] = block
            self._write_lines(lines)
            return
        self._insert(servers, name, dict(fields))

    def replace_server(self, name: str, fields: Mapping[str, Any]) -> None:
        """New fields for an existing server, in the old entry's place."""
        servers = self._servers()
        self._replace(servers, name, dict(fields))

    def remove_server(self, name: str) -> None:
        servers = self._servers()
        if _is_flow(servers):
            self._mutate(lambda: servers.__delitem__(name))
            return
        lines = self._lines()
        start, end, region, column = self._span(servers, name)
        lead = start
        while lead > 0 and _comment(lines[lead - 1]) and _indent(lines[lead - 1]) <= column:
            lead -= 1
        if lead == 0:
            lead = start  # the file's own header comment stays
        parent_line = self.data.lc.key(SERVERS)[0]
        # the blank lines after the server go too when a blank line (or the
        # mcp_servers: line) already separates what comes before
        after = end
        while after < region and _blank(lines[after]):
            after += 1
        # (for the last server the blank lines separate the mapping from what follows)
        last = _own(servers)[-1] == name
        drop_blanks = (lead - 1 == parent_line and not last) or _blank(lines[lead - 1])
        stop = after if drop_blanks else end
        if stop >= len(lines) or (after == region and region == len(lines)):
            stop = region
            while lead > 0 and _blank(lines[lead - 1]):
                lead -= 1
        only = len(_own(servers)) == 1
        del lines[lead:stop]
        self._write_lines(lines)
        if only:
            self._make_empty_map([SERVERS])

    def rename_server(self, old: str, new: str) -> None:
        servers = self._servers()
        lines = self._lines()
        line_no, column = servers.lc.key(old)
        line = lines[line_no]
        for quote in ("", '"', "'"):
            token = f"{quote}{old}{quote}"
            if line[column : column + len(token)] == token and (
                quote or line[column + len(token) : column + len(token) + 1] in (":", " ")
            ):
                lines[line_no] = (
                    line[:column] + f"{quote}{new}{quote}" + line[column + len(token) :]
                )
                self._write_lines(lines)
                return

        def rebuild() -> None:
            position = list(servers.keys()).index(old)
            value = servers.pop(old)
            servers.insert(position, new, value)

        self._mutate(rebuild)


def _own(node: CommentedMap) -> list[Any]:
    """The keys written in ``node`` itself, without those merged in by ``<<: *anchor``."""
    own = getattr(node, "_ok", None)
    return [k for k in node if own is None or k in own]


def _spelled(path: tuple[str, ...], logical_from: int) -> list[str]:
    """``path`` with the keys after ``logical_from`` in YAML spelling (for new keys)."""
    return [*path[:logical_from], *schema.spelled(Dialect.YAML, None, path[logical_from:])]


def _comment_start(line: str) -> int | None:
    """Where the end-of-line comment of ``line`` starts (outside quotes), if any."""
    quote = ""
    for at, char in enumerate(line):
        if quote:
            if char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char == "#" and at > 0 and line[at - 1] in " \t":
            return at
    return None
