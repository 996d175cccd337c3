"""Round-trip editing of one config file (``mcp.toml`` or ``config.yaml``).

``ConfigDocument`` edits the tomlkit / ruamel.yaml tree of the file in place, so every
comment, blank line, key order, quoting style and inline table of what was not edited
survives byte for byte. ``save()`` writes atomically and refuses (``ConflictError``) when
the file changed on disk since it was read.

Key paths are written in the file's own dialect (``("environment", "TOKEN")`` in TOML,
``("env", "TOKEN")`` in YAML); a spelling of the other dialect that means the same key
is mapped onto the one the entry already uses. ``add_server`` takes NEUTRAL fields
(YAML spelling and units, see ``portico.config.translate``).

Comment ownership (what goes when something is removed or replaced):
- setting a key keeps the comment at the end of its line when a one-line value replaces a
  one-line value; a multi-line value replaced takes the comments inside it along;
- removing a key removes its line(s) and the comment on those lines; standalone comment
  lines around it stay;
- removing a server removes its header/key, its body, and the comment block directly
  above it (no blank line between). A comment block directly above the *next* entry stays
  with that entry, and the comment block at the top of the file is never removed.

YAML keys a server gets through ``<<: *anchor`` are read through; setting one writes it
to the server's own entry, and unsetting one is a no-op (it lives in the anchor).
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from portico.config import limits, schema
from portico.config.atomic import ConflictError, Snapshot, read_bytes, write_atomic
from portico.config.edit_errors import DocumentParseError, EditError, NewerVersionError
from portico.config.model import Config, Diagnostic, Dialect, Scope
from portico.config.validate import server_name_problem

if TYPE_CHECKING:
    from portico.config.raw import KeyPath as RawKeyPath
    from portico.config.raw import RawFile

__all__ = [
    "ConfigDocument",
    "ConflictError",
    "DocumentParseError",
    "EditError",
    "KeyPath",
    "NewerVersionError",
    "dialect_of",
    "valid_server_name",
]

KeyPath = Sequence[str] | str


TOML_HEADER = (
    "# Portico MCP servers (mcp.toml): one [mcp.NAME] table per server.\n"
    "# `portico config example mcp` lists every key with its default.\n"
)
YAML_HEADER = (
    "# Portico configuration: MCP servers live under mcp_servers.\n"
    "# `portico config example mcp --format yaml` lists every key with its default.\n"
)


def dialect_of(path: Path) -> Dialect:
    suffix = path.suffix.lower()
    if suffix == ".toml":
        return Dialect.TOML
    if suffix in (".yaml", ".yml"):
        return Dialect.YAML
    raise EditError(f"{path}: not a config file (expected a .toml, .yaml or .yml name)")


def valid_server_name(name: str) -> str | None:
    """None when ``name`` is a valid server name, else what is wrong with it."""
    return server_name_problem(name)


def split_key(key_path: KeyPath) -> tuple[str, ...]:
    parts = tuple(key_path.split(".")) if isinstance(key_path, str) else tuple(key_path)
    if not parts or any(not p for p in parts):
        raise EditError(f"empty key in {'.'.join(parts)!r}")
    return parts


class Tree(Protocol):
    """What a dialect's editable tree offers; see toml_edit.TomlTree / yaml_edit.YamlTree."""

    notes: list[str]

    def dumps(self) -> str: ...
    def server_names(self) -> list[str]: ...
    def get(self, server: str, path: tuple[str, ...]) -> Any: ...
    def set(self, server: str, path: tuple[str, ...], value: Any) -> None: ...
    def unset(self, server: str, path: tuple[str, ...]) -> bool: ...
    def add_server(self, name: str, fields: Mapping[str, Any]) -> None: ...
    def replace_server(self, name: str, fields: Mapping[str, Any]) -> None: ...
    def remove_server(self, name: str) -> None: ...
    def rename_server(self, old: str, new: str) -> None: ...
    def get_root(self, path: tuple[str, ...]) -> Any: ...
    def set_root(self, path: tuple[str, ...], value: Any) -> None: ...
    def unset_root(self, path: tuple[str, ...]) -> bool: ...
    def parse_value(self, text: str) -> Any: ...
    def key_lines(self, names: Sequence[str]) -> dict[RawKeyPath, int]: ...


# From this size on, ``load`` parses only the servers an edit touches (``span_tree``);
# below it a whole-file round trip costs a few milliseconds.
SPANS_FROM_CHARS = 2048


def _make_tree(dialect: Dialect, text: str, path: Path, *, spans: bool = False) -> Tree:
    if spans:
        from portico.config.span_tree import span_tree

        tree = span_tree(dialect, text, path)
        if tree is not None:
            return tree
    if dialect is Dialect.TOML:
        from portico.config.toml_edit import TomlTree

        return TomlTree(text, path)
    from portico.config.yaml_edit import YamlTree

    return YamlTree(text, path)


class ConfigDocument:
    """One config file, editable in place. Not thread-safe; one editor per instance."""

    def __init__(
        self,
        path: Path,
        dialect: Dialect,
        text: str,
        snapshot: Snapshot | None,
        *,
        spans: bool = False,
    ) -> None:
        """``spans``: parse the servers an edit touches, not the whole file, where the
        file's shape allows (see ``portico.config.span_tree``); the edits are the same."""
        self.path = path
        self.dialect = dialect
        self._original = text
        self._snapshot = snapshot
        # the trees work on "\n" text without a BOM; text() puts both back as they were
        self._bom = text.startswith("\ufeff")
        body = text[1:] if self._bom else text
        self._crlf = "\r\n" in body and body.count("\r\n") == body.count("\n")
        if self._crlf:
            body = body.replace("\r\n", "\n")
        self._tree: Tree = _make_tree(dialect, body, path, spans=spans)

    # -- opening ---------------------------------------------------------------------

    @classmethod
    def load(cls, path: Path) -> ConfigDocument:
        """Read ``path``; FileNotFoundError if absent, DocumentParseError if it does not parse."""
        path = Path(path)
        dialect = dialect_of(path)
        data, snap = read_bytes(path)
        if data is None:
            raise FileNotFoundError(f"{path}: no such file")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = data[: exc.start].count(b"\n") + 1
            raise DocumentParseError(path, f"not UTF-8 text ({exc.reason})", line) from None
        over = limits.size_problem(len(data)) or (
            limits.yaml_problem(text) if dialect is Dialect.YAML else None
        )
        if over is not None:
            raise DocumentParseError(path, over.message, over.line)
        doc = cls(path, dialect, text, snap, spans=len(text) >= SPANS_FROM_CHARS)
        doc.refuse_newer_version()
        return doc

    def refuse_newer_version(self) -> None:
        """NewerVersionError when the file's ``version`` is not one this build reads."""
        if self.dialect is not Dialect.TOML:
            return
        version = self._tree.get_root(("version",))
        if version is None or version == schema.SUPPORTED_VERSION:
            return
        if isinstance(version, bool) or not isinstance(version, int) or version < 1:
            raise NewerVersionError(
                f"{self.path}: version = {version!r} is not a valid version; write "
                f"version = {schema.SUPPORTED_VERSION} by hand, then retry the edit"
            )
        if version > schema.SUPPORTED_VERSION:
            raise NewerVersionError(
                f"{self.path}: version = {version} is newer than this build of Portico "
                f"reads (version {schema.SUPPORTED_VERSION}); it cannot know that "
                "version's keys, so it does not edit the file: update Portico"
            )

    @classmethod
    def new(cls, path: Path) -> ConfigDocument:
        """An empty document for a file that does not exist yet (with a header comment).

        ``save()`` refuses if the file appeared in the meantime.
        """
        path = Path(path)
        dialect = dialect_of(path)
        header = TOML_HEADER if dialect is Dialect.TOML else YAML_HEADER
        doc = cls(path, dialect, header, Snapshot.missing(path))
        doc._original = ""
        return doc

    @classmethod
    def open(cls, path: Path) -> ConfigDocument:
        """``load`` if the file exists, else ``new``."""
        try:
            return cls.load(path)
        except FileNotFoundError:
            return cls.new(path)

    @classmethod
    def from_text(cls, text: str, path: Path, *, spans: bool = False) -> ConfigDocument:
        """A document over ``text`` that was not read from disk (``save`` does not check)."""
        return cls(Path(path), dialect_of(Path(path)), text, None, spans=spans)

    def reload(self) -> ConfigDocument:
        """A fresh document of what is on disk now (after a ConflictError)."""
        return ConfigDocument.open(self.path)

    # -- reading ---------------------------------------------------------------------

    def text(self) -> str:
        text = self._tree.dumps()
        if self._crlf:
            text = text.replace("\n", "\r\n")
        return "\ufeff" + text if self._bom else text

    @property
    def notes(self) -> list[str]:
        """One line each: what the edits did beyond what was asked (an alias broken)."""
        return self._tree.notes

    @property
    def original_text(self) -> str:
        """The text as read (empty for a new document)."""
        return self._original

    @property
    def changed(self) -> bool:
        return self.text() != self._original

    @property
    def exists_on_disk(self) -> bool:
        return self._snapshot is not None and self._snapshot.exists

    def server_names(self) -> list[str]:
        return self._tree.server_names()

    def has_server(self, name: str) -> bool:
        return name in self._tree.server_names()

    def get(self, server: str, *key_path: str) -> Any:
        """The plain value (dict/list/str/int/...) at ``key_path`` of ``server``; None if unset.

        With no key path, the whole server entry as a plain dict.
        """
        self._require(server)
        path = split_key(".".join(key_path)) if key_path else ()
        return self._tree.get(server, path)

    def get_field(self, server: str, name: str) -> Any:
        """A key by its logical schema name (``oauth.callback_port``), in model units.

        Durations come back in seconds whatever the dialect writes (TOML writes ms).
        ``command`` is returned as written (TOML: the whole array; YAML: the program).
        """
        spec = schema.key(name)
        return spec.from_dialect(self.get(server, *spec.path(self.dialect)), self.dialect)

    def set_field(self, server: str, name: str, value: Any) -> None:
        """Set a key by its logical schema name, ``value`` in model units (seconds)."""
        spec = schema.key(name)
        self.set(server, spec.path(self.dialect), spec.to_dialect(value, self.dialect))

    def unset_field(self, server: str, name: str) -> bool:
        return self.unset(server, schema.key(name).path(self.dialect))

    def get_setting(self, key_path: KeyPath) -> Any:
        return self._tree.get_root(self._setting_path(key_path))

    # -- editing ---------------------------------------------------------------------

    def parse_value(self, text: str) -> Any:
        """``text`` read as a scalar or inline collection of this dialect.

        Text that does not parse as a value is taken as a plain string, so
        ``https://example.com`` or ``npx`` need no quotes on a command line.
        """
        return self._tree.parse_value(text)

    def value_for(self, server: str, key_path: KeyPath, text: str) -> Any:
        """What ``text`` typed for ``key_path`` means, typed by the schema.

        A string key gets ``text`` exactly (the writer quotes it where the plain form
        would read as something else); a number, duration or boolean must look like one;
        lists and tables are read as an inline value of this dialect and checked for
        their shape. Keys the schema does not know read ``text`` as ``parse_value`` does.
        EditError names the key and the type it wants.
        """
        path = split_key(key_path)
        where = f"{self.path}: {server}.{'.'.join(path)}"
        at = schema.key_at(self.dialect, path)
        spec = at.spec
        if spec is None:
            return self.parse_value(text)
        if at.entry:
            return text if spec.type == "mapping" else self.parse_value(text)
        try:
            typed = schema.typed_text(spec, self.dialect, text)
        except schema.ValueTypeError as exc:
            raise EditError(f"{where}: {exc}") from None
        if typed is not None:
            return typed
        value = self.parse_value(text)
        plain = value.unwrap() if hasattr(value, "unwrap") else value
        shape = _shape_problem(spec, plain, self.dialect)
        if shape:
            raise EditError(f"{where}: {shape}")
        return value

    def require_known_key(self, server: str, key_path: KeyPath) -> None:
        """EditError (with the closest key) when the schema has no such server key."""
        from portico.config.validate import suggestion

        path = split_key(key_path)
        if schema.key_at(self.dialect, path).spec is not None:
            return
        parent: str | None = None
        for depth, part in enumerate(path):
            spec = schema.lookup(self.dialect, parent, part)
            if spec is None:
                known = schema.spellings(self.dialect, parent)
                where = ".".join((server, *path[: depth + 1]))
                raise EditError(
                    f"{self.path}: {where}: not a key of a server{suggestion(part, known)} "
                    "(`portico config example mcp` lists them)"
                )
            parent = spec.name
        raise EditError(f"{self.path}: {server}.{'.'.join(path)}: not a key of a server")

    def set(self, server: str, key_path: KeyPath, value: Any) -> None:
        """Set a key of ``server`` (nested tables are created as needed)."""
        self._require(server)
        self._tree.set(server, split_key(key_path), value)

    def unset(self, server: str, key_path: KeyPath) -> bool:
        """Remove a key of ``server``; False if it was not set."""
        self._require(server)
        return self._tree.unset(server, split_key(key_path))

    def add_server(self, name: str, fields: Mapping[str, Any], *, replace: bool = False) -> None:
        """Append a server from NEUTRAL fields (translated to this file's dialect).

        With ``replace``, an existing server of that name gets the new fields in its
        place (its header and the comments above and at the end of it stay).
        """
        problem = valid_server_name(name)
        if problem:
            raise EditError(f"{self.path}: {problem}")
        from portico.config.translate import to_dialect

        spelled = to_dialect(fields, self.dialect)
        if self.has_server(name):
            if not replace:
                raise EditError(
                    f"{self.path}: a server named {name!r} already exists; "
                    "remove it first or choose another name"
                )
            self._tree.replace_server(name, spelled)  # in place, under its comments
            return
        self._tree.add_server(name, spelled)

    def remove_server(self, name: str) -> None:
        self._require(name)
        self._tree.remove_server(name)

    def rename_server(self, old: str, new: str) -> None:
        self._require(old)
        if old == new:
            return
        problem = valid_server_name(new)
        if problem:
            raise EditError(f"{self.path}: {problem}")
        if self.has_server(new):
            raise EditError(f"{self.path}: a server named {new!r} already exists")
        self._tree.rename_server(old, new)

    def set_enabled(self, name: str, enabled: bool) -> None:
        self.set(name, ("enabled",), bool(enabled))

    def set_setting(self, key_path: KeyPath, value: Any) -> None:
        """Set a top-level setting by its logical name (``defer_tools``, ``approvals.mode``)."""
        self._tree.set_root(self._setting_path(key_path), value)

    def unset_setting(self, key_path: KeyPath) -> bool:
        return self._tree.unset_root(self._setting_path(key_path))

    def diff(self) -> str:
        """A unified diff of the edits so far (empty when nothing changed)."""
        return "".join(
            difflib.unified_diff(
                self._original.splitlines(keepends=True),
                self.text().splitlines(keepends=True),
                fromfile=f"{self.path} (on disk)",
                tofile=f"{self.path} (edited)",
            )
        )

    def raw_servers(self, names: Sequence[str], scope: Scope, *, lines: bool) -> RawFile:
        """The entries of ``names`` as the loader would read them from this text, taken
        from the edited tree (no parse); ``lines``: also find the line of every key."""
        from portico.config.raw import RawFile, RawServer

        raw = RawFile(path=self.path, scope=scope, dialect=self.dialect)
        positions = self._tree.key_lines(names) if lines else {}
        for name in names:
            if name not in self._tree.server_names():
                continue
            data = self._tree.get(name, ())
            own = {p[1:]: n for p, n in positions.items() if p[:1] == (name,) and len(p) > 1}
            raw.servers.append(RawServer(name, data, positions.get((name,), 1), own))
        return raw

    def problems(
        self, names: Sequence[str], scope: Scope = Scope.GLOBAL, *, lines: bool = True
    ) -> list[Diagnostic]:
        """Errors and warnings the loader would report for the servers ``names`` of the
        edited text (validated from the tree; nothing is parsed again)."""
        from portico.config.validate import validate_servers

        raw = self.raw_servers(names, scope, lines=lines)
        validate_servers(raw)
        return list(raw.diagnostics)

    def check(self, scope: Scope = Scope.GLOBAL) -> Config:
        """The edited text validated by the loader, as if it were saved (nothing is written)."""
        from portico.config.load import parse_text

        return parse_text(self.text(), self.path, scope, self.dialect)

    # -- writing ---------------------------------------------------------------------

    def save(self) -> None:
        """Write atomically; ConflictError if the file changed on disk since it was read."""
        text = self.text()
        self._snapshot = write_atomic(self.path, text, expected=self._snapshot)
        self._original = text

    # -- helpers ---------------------------------------------------------------------

    def _require(self, server: str) -> None:
        if server in self._tree.server_names():
            return
        names = ", ".join(self._tree.server_names()) or "none"
        raise EditError(f"{self.path}: no server named {server!r} (servers here: {names})")

    def _setting_path(self, key_path: KeyPath) -> tuple[str, ...]:
        parts = split_key(key_path)
        try:
            spec = schema.setting(".".join(parts))
        except KeyError:
            return parts
        path = spec.toml if self.dialect is Dialect.TOML else spec.yaml
        if path is None:
            other = "config.yaml" if self.dialect is Dialect.TOML else "mcp.toml"
            raise EditError(
                f"{self.path}: {spec.name} is not a setting of this file; set it in {other}"
            )
        return path


def _shape_problem(spec: schema.KeySpec, value: Any, dialect: Dialect) -> str | None:
    """Why ``value`` (read as an inline value) cannot be ``spec``'s value, if it cannot."""
    kind = spec.type
    if kind == "string_list" or (kind == "command" and dialect is Dialect.TOML):
        if isinstance(value, list) and all(isinstance(item, str) for item in value):
            return None
        if kind == "command":
            return (
                "must be an array in mcp.toml (program, then arguments), like "
                '["npx", "-y", "some-server"]'
            )
        example = '["a", "b"]' if dialect is Dialect.TOML else "[a, b]"
        return f"must be a list of strings, like {example}"
    if kind == "mapping":
        if isinstance(value, dict) and all(isinstance(v, str) for v in value.values()):
            return None
        example = '{ NAME = "value" }' if dialect is Dialect.TOML else "{NAME: value}"
        return f"must be a table of names to strings, like {example}"
    if kind == "table" and not isinstance(value, dict):
        example = "{ key = value }" if dialect is Dialect.TOML else "{key: value}"
        return f"must be a table of settings, like {example}"
    return None
