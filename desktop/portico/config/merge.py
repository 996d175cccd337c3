"""Re-apply the editor's unsaved edits onto a config file that changed on disk.

The three versions are the text the editor read (``base``), the person's edited text
(``mine``) and the file as it is now (``theirs``). Each side's changes are the server keys
whose values differ from ``base`` (leaf key paths; a list is one value). When the two sides
touch different keys, the person's changes are replayed onto ``theirs`` through the
round-trip document (so everything else in the new file stays byte for byte); when they
touch the same key, or the person changed something outside the servers, it is a conflict
the person decides. No Qt here.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from portico.config import schema
from portico.config.document import ConfigDocument, DocumentParseError
from portico.config.model import Dialect

KeyPath = tuple[str, ...]
Leaves = dict[tuple[str, KeyPath], Any]  # (server, key path) -> value
_GONE = object()


@dataclass(frozen=True)
class Merge:
    text: str | None  # the merged text, or None on a conflict
    conflicts: tuple[str, ...] = ()  # "server.key" the two sides both changed


def _leaves(value: Any, prefix: KeyPath = ()) -> Iterator[tuple[KeyPath, Any]]:
    if isinstance(value, dict) and value:
        for key, child in value.items():
            yield from _leaves(child, (*prefix, str(key)))
    else:
        yield prefix, value


def _servers(doc: ConfigDocument) -> dict[str, dict[KeyPath, Any]]:
    return {name: dict(_leaves(doc.get(name) or {})) for name in doc.server_names()}


def _rest(dialect: Dialect, text: str) -> Any:
    """The file's data without its servers: what changed outside them."""
    if dialect is Dialect.TOML:
        import tomllib

        data: Any = tomllib.loads(text)
    else:
        from ruamel.yaml import YAML

        data = YAML(typ="safe").load(text) or {}
    if not isinstance(data, dict):
        return data
    if dialect is Dialect.TOML:  # servers are the tables under [mcp], settings beside them
        mcp = data.get("mcp")
        if isinstance(mcp, dict):
            data["mcp"] = {k: v for k, v in mcp.items() if not isinstance(v, dict)}
        return data
    return {k: v for k, v in data.items() if k != schema.YAML_SERVERS_KEY}


def _changes(
    base: dict[str, dict[KeyPath, Any]], other: dict[str, dict[KeyPath, Any]]
) -> dict[tuple[str, KeyPath], Any]:
    out: dict[tuple[str, KeyPath], Any] = {}
    for server in base.keys() | other.keys():
        before, after = base.get(server), other.get(server)
        if before is None or after is None:
            out[(server, ())] = _GONE if after is None else after
            continue
        for path in before.keys() | after.keys():
            if before.get(path, _GONE) != after.get(path, _GONE):
                out[(server, path)] = after.get(path, _GONE)
    return out


def _touch(a: tuple[str, KeyPath], b: tuple[str, KeyPath]) -> bool:
    """Two changes overlap: same server and one key path is a prefix of the other."""
    if a[0] != b[0]:
        return False
    short = min(len(a[1]), len(b[1]))
    return a[1][:short] == b[1][:short]


def three_way(path: Path, dialect: Dialect, base: str, mine: str, theirs: str) -> Merge:
    try:
        docs = [ConfigDocument(path, dialect, t, None) for t in (base, mine, theirs)]
    except DocumentParseError as exc:
        return Merge(None, (f"a version does not parse ({exc})",))
    base_doc, mine_doc, theirs_doc = docs
    try:
        outside_changed = _rest(dialect, mine) != _rest(dialect, base)
    except Exception as exc:  # the document parsed; the plain reader should too
        return Merge(None, (f"a version does not parse ({exc})",))
    if outside_changed:
        return Merge(None, ("settings outside the servers",))
    b, m, t = _servers(base_doc), _servers(mine_doc), _servers(theirs_doc)
    mine_changes, their_changes = _changes(b, m), _changes(b, t)
    clashes = sorted(
        {
            ".".join((server, *key)) if key else server
            for server, key in mine_changes
            for other in their_changes
            if _touch((server, key), other)
        }
    )
    if clashes:
        return Merge(None, tuple(clashes))
    out = ConfigDocument(path, dialect, theirs, None)
    for (server, key), value in mine_changes.items():
        if not key:  # the whole server added or removed
            if value is _GONE:
                out.remove_server(server)
            else:
                out.add_server(server, {}) if not out.has_server(server) else None
                for leaf, leaf_value in m[server].items():
                    out.set(server, leaf, leaf_value)
        elif value is _GONE:
            out.unset(server, key)
        else:
            out.set(server, key, value)
    return Merge(out.text())
