"""What every importer shares: the result, server names, and field-by-field conversion.

An importer turns one entry of another client's JSON into NEUTRAL fields (YAML spelling:
``command`` + ``args``, ``env``, ``cwd``, ``url``, ``headers``, ``transport: sse``,
``oauth``, ``enabled``). Whatever it cannot carry over is reported, naming the server and
the field; nothing is dropped silently.
"""

from __future__ import annotations

import json
import os
import re
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from portico.config.validate import server_name_problem

# Server names: ASCII letters, digits, '-' and '_', no '__' (reserved for tool names).

# Where Portico resolves ${env:...} / ${keyring:...} references at connect time.
REFERENCE_FIELDS = ("env", "headers")
_REFERENCE_RE = re.compile(r"\$\{(?:env|keyring):[^}]*\}")
_VARIABLE_RE = re.compile(r"\$\{([^}]*)\}")
_UNESCAPED_VARIABLE_RE = re.compile(r"(?<!\$)\$\{([^}]*)\}")
# Field names whose plain-text values are most likely secrets.
_SECRET_KEY_RE = re.compile(
    r"(?i)(token|secret|passw|api[_-]?key|apikey|authorization|credential|private[_-]?key)"
    r"[^.]*$"
)
# The references portico.config.secrets resolves (spelled out, never the bare ${VAR}).
_PORTICO_REFERENCE_RE = re.compile(r"\$\{(?:env:[A-Za-z_][A-Za-z0-9_]*|keyring:[A-Za-z0-9_.-]+)\}")


def is_valid_name(name: str) -> bool:
    return server_name_problem(name) is None


def to_valid_name(name: str) -> str:
    """A valid Portico server name as close to ``name`` as possible."""
    if is_valid_name(name):
        return name
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    cleaned = re.sub(r"[^A-Za-z0-9_-]+", "-", ascii_name)
    cleaned = re.sub(r"_{2,}", "_", cleaned)
    cleaned = re.sub(r"-{2,}", "-", cleaned).strip("-_")
    return cleaned or "server"


@dataclass(frozen=True)
class SecretToSet:
    """A keyring entry the imported config refers to and the person still has to store."""

    name: str
    description: str = ""
    servers: tuple[str, ...] = ()

    def command(self) -> str:
        return f"portico secret set {self.name}"


@dataclass
class ImportResult:
    """What an import found.

    ``servers``: (Portico name, neutral fields) in file order. ``problems``: one line per
    field or server that could not be converted as written, each naming the server (as
    spelled in the source) and the field. ``skipped``: entries left out on purpose, with
    why. ``renamed``: new name -> name in the source. ``origins``: name -> where in the
    source it came from ("user", "project /path/to/dir"). ``secrets``: keyring entries
    the converted config refers to (``portico secret set NAME``).
    """

    kind: str
    source: Path | None = None  # the file read
    servers: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    renamed: dict[str, str] = field(default_factory=dict)
    origins: dict[str, str] = field(default_factory=dict)
    secrets: list[SecretToSet] = field(default_factory=list)

    def names(self) -> list[str]:
        return [name for name, _ in self.servers]

    def fields(self, name: str) -> dict[str, Any]:
        for server, fields in self.servers:
            if server == name:
                return fields
        raise KeyError(name)

    def problem(self, server: str, key: str | None, message: str) -> None:
        self.problems.append(f"{server}.{key}: {message}" if key else f"{server}: {message}")

    def need_secret(self, name: str, description: str, server: str) -> None:
        for i, known in enumerate(self.secrets):
            if known.name == name:
                if server not in known.servers:
                    self.secrets[i] = SecretToSet(
                        name, known.description or description, (*known.servers, server)
                    )
                return
        self.secrets.append(SecretToSet(name, description, (server,)))

    def add(self, original: str, fields: dict[str, Any], origin: str | None = None) -> None:
        """Record a converted server under a valid, unique name."""
        name = original if is_valid_name(original) else to_valid_name(original)
        for known, known_fields in self.servers:
            if known == name and known_fields == fields:
                where = f" (from {origin})" if origin else ""
                self.skipped.append(
                    f"{original}{where}: the same server as {known!r} imported above"
                )
                return
        base, n = name, 2
        while name in self.names():
            name = f"{base}-{n}"
            n += 1
        if name != original:
            self.renamed[name] = original
            why = (
                "Portico server names use ASCII letters, digits, '-' and '_', without '__' or dots"
                if name == base
                else f"another imported server is already called {base!r}"
            )
            self.problem(original, None, f"renamed to {name!r} ({why})")
        if origin:
            self.origins[name] = origin
        self.servers.append((name, fields))


# A variable translator: (text, server, field path) -> text with Portico references.
Translate = Callable[[str, str, str], str]


def keep_text(text: str, server: str, where: str) -> str:
    return text


def variable_names(text: str) -> list[str]:
    return _VARIABLE_RE.findall(text)


def substitute(text: str, replace: Callable[[str], str | None]) -> str:
    """Replace each ``${...}``: ``replace(inner)`` returns the new text or None to keep."""

    def one(match: re.Match[str]) -> str:
        new = replace(match.group(1))
        return match.group(0) if new is None else new

    return _VARIABLE_RE.sub(one, text)


def scalar_text(value: Any) -> str | None:
    """A JSON scalar as the string a command line or environment would see."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return json.dumps(value)
    return None


# Extra per-source handler: (key, value, fields, server) -> True when it handled the key.
ExtraField = Callable[[str, Any, dict[str, Any], str], bool]

STDIO_TYPES = {"stdio"}
HTTP_TYPES = {"http", "streamable-http", "streamablehttp", "streamable_http"}
SSE_TYPES = {"sse"}


class EntryConverter:
    """Turns one server entry into neutral fields, reporting into ``result``."""

    def __init__(
        self,
        result: ImportResult,
        translate: Translate = keep_text,
        extra: ExtraField | None = None,
        ignored: Mapping[str, str] | None = None,
        source_label: str = "the source client",
    ) -> None:
        self.source_label = source_label
        self.result = result
        self.translate = translate
        self.extra = extra
        self.ignored = dict(ignored or {})  # key -> why it is not converted

    # -- pieces ---------------------------------------------------------------------
    def text(
        self, value: Any, server: str, where: str, *, secret: bool | None = None
    ) -> str | None:
        """A converted text value. ``secret``: Portico resolves references there (env and
        header values, client secrets); by default decided from the field name."""
        text = scalar_text(value)
        if text is None:
            self.result.problem(
                server, where, f"expected text, found {_json_kind(value)}; not converted"
            )
            return None
        before = len(self.result.problems)
        text = self.translate(text, server, where)
        if secret is None:
            secret = where.split(".")[0].split("[")[0] in REFERENCE_FIELDS
        if secret:
            text = self._keep_literal(text, server, where, len(self.result.problems) > before)
            if _SECRET_KEY_RE.search(where) and not _PORTICO_REFERENCE_RE.search(text):
                self.result.notes.append(
                    f"{server}.{where} holds a secret in plain text, as it did in "
                    f"{self.source_label}; better: store it with `portico secret set NAME` "
                    "and write ${keyring:NAME} there"
                )
            return text
        if _REFERENCE_RE.search(text):
            self.result.problem(
                server,
                where,
                f"{text!r} holds a ${{...}} reference, which Portico expands only in env "
                "and header values and client secrets; kept as written, edit it after the "
                "import",
            )
        return text

    def _keep_literal(self, text: str, server: str, where: str, reported: bool) -> str:
        """Escape every ``${...}`` that is not a Portico reference as ``$${...}``, so the
        text stays what the source client passed instead of failing validation."""
        kept: list[str] = []

        def one(match: re.Match[str]) -> str:
            if _PORTICO_REFERENCE_RE.fullmatch(match.group(0)):
                return match.group(0)
            kept.append(match.group(0))
            return "$" + match.group(0)

        escaped = _UNESCAPED_VARIABLE_RE.sub(one, text)
        if kept and not reported:
            self.result.problem(
                server,
                where,
                f"{', '.join(kept)} is not expanded by {self.source_label}, nor is it a "
                f"Portico reference; written as {escaped!r} (literal text). Write "
                "${env:NAME} or ${keyring:NAME} if you meant a variable",
            )
        return escaped

    def mapping(self, value: Any, server: str, where: str) -> dict[str, str] | None:
        if not isinstance(value, Mapping):
            self.result.problem(
                server, where, f"expected an object, found {_json_kind(value)}; not converted"
            )
            return None
        out: dict[str, str] = {}
        for key, item in value.items():
            text = self.text(item, server, f"{where}.{key}")
            if text is not None:
                out[str(key)] = text
        return out

    # -- the whole entry ------------------------------------------------------------
    def convert(self, server: str, entry: Any) -> dict[str, Any] | None:
        """Neutral fields, or None when the entry cannot become a server at all."""
        result = self.result
        if not isinstance(entry, Mapping):
            result.problem(
                server,
                None,
                f"expected an object, found {_json_kind(entry)}; server not imported",
            )
            return None
        kind = entry.get("type", entry.get("transport"))
        kind_name = kind.lower() if isinstance(kind, str) else None
        if kind is not None and kind_name not in STDIO_TYPES | HTTP_TYPES | SSE_TYPES:
            result.problem(
                server,
                "type",
                f"transport {kind!r} is not supported by Portico (stdio, http, sse); "
                "server not imported",
            )
            return None
        fields: dict[str, Any] = {}
        has_command = "command" in entry
        has_url = "url" in entry or "serverUrl" in entry
        if not has_command and not has_url:
            result.problem(server, None, "has neither a command nor a url; server not imported")
            return None
        remote = has_url and not has_command and kind_name not in STDIO_TYPES
        if kind_name in STDIO_TYPES and not has_command:
            result.problem(
                server, "command", "type is stdio but there is no command; server not imported"
            )
            return None
        if kind_name in HTTP_TYPES | SSE_TYPES and not has_url:
            result.problem(
                server, "url", f"type is {kind} but there is no url; server not imported"
            )
            return None
        if has_command and kind_name in HTTP_TYPES | SSE_TYPES:
            remote = True

        for key, value in entry.items():
            if key in ("type", "transport"):
                continue
            if key == "command" and not remote:
                command, leading_args = self._command(value, server)
                if command is None:
                    return None
                fields["command"] = command
                if leading_args:
                    fields["args"] = leading_args + fields.get("args", [])
            elif key == "args" and not remote:
                args = self._args(value, server)
                if args is not None:
                    fields.setdefault("args", []).extend(args)
            elif key == "env" and not remote:
                env = self.mapping(value, server, "env")
                if env:
                    fields["env"] = env
            elif key == "cwd" and not remote:
                cwd = self.text(value, server, "cwd")
                if cwd is not None:
                    fields["cwd"] = cwd
            elif key in ("url", "serverUrl") and remote:
                url = self.text(value, server, key)
                if url is None:
                    return None
                if not url.startswith(("http://", "https://")):
                    result.problem(
                        server,
                        key,
                        f"{url!r} is not an http:// or https:// URL; server not imported",
                    )
                    return None
                fields["url"] = url
            elif key == "headers" and remote:
                headers = self.mapping(value, server, "headers")
                if headers:
                    fields["headers"] = headers
            elif key == "disabled" and isinstance(value, bool):
                if value:
                    fields["enabled"] = False
            elif key in ("command", "args", "env", "cwd") or (
                key in ("url", "serverUrl", "headers")
            ):
                other = "a remote server" if remote else "a command (stdio) server"
                result.problem(server, key, f"not used by {other}; not converted")
            elif self.extra is not None and self.extra(key, value, fields, server):
                continue
            elif key in self.ignored:
                result.problem(server, key, self.ignored[key])
            else:
                result.problem(server, key, "unknown field; not converted")

        if not fields.get("args", True):
            del fields["args"]
        if remote:
            if kind_name in SSE_TYPES:
                fields["transport"] = "sse"
            elif kind is None and fields["url"].rstrip("/").endswith("/sse"):
                fields["transport"] = "sse"
                result.notes.append(
                    f"{server}: the URL ends in /sse, so it was imported with transport: sse"
                )
        return _ordered(fields)

    def _command(self, value: Any, server: str) -> tuple[str | None, list[str]]:
        """The program, plus leading args when the command was written as a list."""
        leading: list[str] = []
        if isinstance(value, list) and value:
            value, leading = (
                value[0],
                [
                    t
                    for i, item in enumerate(value[1:], 1)
                    if (t := self.text(item, server, f"command[{i}]")) is not None
                ],
            )
        command = self.text(value, server, "command")
        if command is None:
            self.result.problem(server, "command", "server not imported")
            return None, []
        if not command.strip():
            self.result.problem(server, "command", "empty command; server not imported")
            return None, []
        return command, leading

    def _args(self, value: Any, server: str, where: str = "args") -> list[str] | None:
        if not isinstance(value, list):
            self.result.problem(
                server, where, f"expected a list, found {_json_kind(value)}; not converted"
            )
            return None
        out: list[str] = []
        for i, item in enumerate(value):
            text = self.text(item, server, f"{where}[{i}]")
            if text is not None:
                out.append(text)
        return out


_ORDER = ("command", "args", "env", "cwd", "url", "transport", "headers", "oauth", "enabled")


def _ordered(fields: dict[str, Any]) -> dict[str, Any]:
    rank = {key: i for i, key in enumerate(_ORDER)}
    return dict(sorted(fields.items(), key=lambda kv: rank.get(kv[0], len(rank))))


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, list):
        return "a list"
    return "an object"


def servers_section(
    data: Mapping[str, Any], key: str, result: ImportResult, where: str = "the file"
) -> dict[str, Any] | None:
    """The object of servers under ``key``, or None after telling the person why nothing
    is imported (no such section: a note; something else there: a problem)."""
    servers = data.get(key)
    if servers is None:
        result.notes.append(f"{where} has no {key} section: no servers to import")
        return None
    if not isinstance(servers, dict):
        result.problems.append(_not_servers(key, servers))
        return None
    return servers


def _not_servers(key: str, found: Any) -> str:
    return f"{key}: expected an object of servers, found {type(found).__name__}; nothing imported"


def convert_servers(
    servers: Any,
    result: ImportResult,
    converter: EntryConverter,
    origin: str | None = None,
    key: str = "mcpServers",
) -> None:
    """Convert each entry of an object of servers into the result."""
    if not isinstance(servers, dict):
        result.problems.append(_not_servers(key, servers))
        return
    for name, entry in servers.items():
        fields = converter.convert(str(name), entry)
        if fields is not None:
            result.add(str(name), fields, origin)


def workspace_of(path: Path | None, folder_name: str, project: Path | None) -> Path | None:
    """The workspace a per-project file belongs to (``<ws>/<folder_name>/mcp.json``)."""
    if path is not None and path.parent.name == folder_name:
        return path.parent.parent.resolve()
    return project.resolve() if project else None


def editor_variables(
    result: ImportResult, workspace: Path | None, home: Path
) -> Callable[[str, str, str], str | None]:
    """The ``${...}`` variables VS Code and Cursor share (not ``${input:...}``)."""

    def replace(inner: str, server: str, where: str) -> str | None:
        if inner.startswith("env:"):
            return None  # Portico spells it the same
        if inner == "userHome":
            return str(home)
        if inner in ("pathSeparator", "/"):
            return os.sep
        if inner in ("workspaceFolder", "workspaceFolderBasename"):
            if workspace is None:
                result.problem(
                    server,
                    where,
                    f"${{{inner}}} needs the workspace folder, which is unknown here "
                    "(pass --project DIR); kept as literal text",
                )
                return None
            return str(workspace) if inner == "workspaceFolder" else workspace.name
        result.problem(
            server, where, f"${{{inner}}} has no Portico equivalent; kept as literal text"
        )
        return None

    return replace
