"""``portico://add`` links: the install buttons web pages put next to an MCP server.

    portico://add?name=NAME&command=npx%20-y%20some-server[&arg=A][&env=KEY=VALUE]...
    portico://add?name=NAME&url=https://host/mcp[&header=Name:%20value][&transport=sse]

``parse_add_link`` turns a link into an ``AddRequest`` or raises ``DeepLinkError`` with one
line that says what is wrong (unknown parameter, repeated parameter, bad name, oversized
link ...). ``prepare`` then renders exactly what would be written to which file and runs
the loader's validation on it, as ``portico mcp add`` does, so a link that would write a
broken or partial server is refused before anything is shown as addable. Nothing touches
the disk until ``Prepared.write()``, which a person's confirmation calls.
"""

from __future__ import annotations

import difflib
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from portico.config.document import ConfigDocument, DocumentParseError, EditError
from portico.config.model import Scope, ServerSpec
from portico.config.targets import choose_file, defining_files
from portico.config.validate import server_name_problem

SCHEME = "portico"
MAX_LINK_CHARS = 8192
MAX_NAME_CHARS = 64
MAX_VALUE_CHARS = 2048
MAX_ARGS = 64
MAX_PAIRS = 32

_SINGLE = ("name", "command", "url", "transport")
_REPEATED = ("arg", "env", "header")


class DeepLinkError(ValueError):
    """A link that cannot become a server; the message is one line for a person."""


@dataclass(frozen=True)
class AddRequest:
    name: str
    fields: dict[str, Any]


@dataclass
class Prepared:
    """What confirming would write: ``path`` gets ``added`` (the new lines, verbatim)."""

    request: AddRequest
    document: ConfigDocument = field(repr=False)
    added: str
    diff: str
    spec: ServerSpec | None = None  # the server as the loader reads the added lines

    @property
    def path(self) -> Path:
        return self.document.path

    def write(self) -> None:
        """Save the file (atomic; ConflictError if it changed on disk meanwhile)."""
        self.document.save()


def is_deep_link(text: str) -> bool:
    return text.strip().lower().startswith(f"{SCHEME}:")


def parse_add_link(link: str) -> AddRequest:
    if len(link) > MAX_LINK_CHARS:
        raise DeepLinkError(
            f"the link is {len(link)} characters long; Portico accepts at most "
            f"{MAX_LINK_CHARS}, so it was not opened"
        )
    link = link.strip()
    parts = urlsplit(link)
    if parts.scheme.lower() != SCHEME:
        raise DeepLinkError(f"not a {SCHEME}:// link: {_shorten(link)}")
    action = (parts.netloc or parts.path).strip("/").lower()
    if action != "add":
        raise DeepLinkError(
            f"unknown link action {action or '(none)'!r}: Portico links look like "
            f"{SCHEME}://add?name=NAME&command=... or {SCHEME}://add?name=NAME&url=..."
        )
    try:
        pairs = parse_qsl(parts.query, keep_blank_values=True, strict_parsing=bool(parts.query))
    except ValueError:
        raise DeepLinkError(
            "the link's parameters are malformed (expected key=value&...)"
        ) from None
    single: dict[str, str] = {}
    repeated: dict[str, list[str]] = {key: [] for key in _REPEATED}
    for key, value in pairs:
        if "\x00" in value or any(ord(c) < 32 and c not in "\t" for c in value):
            raise DeepLinkError(f"the link's {key!r} holds control characters")
        if len(value) > MAX_VALUE_CHARS:
            raise DeepLinkError(
                f"the link's {key!r} is {len(value)} characters long (at most {MAX_VALUE_CHARS})"
            )
        if key in _SINGLE:
            if key in single:
                raise DeepLinkError(f"the link gives {key!r} twice; give it once")
            single[key] = value
        elif key in _REPEATED:
            repeated[key].append(value)
        else:
            known = ", ".join((*_SINGLE, *_REPEATED))
            raise DeepLinkError(f"the link has an unknown parameter {key!r} (known: {known})")
    name = single.get("name", "")
    if not name:
        raise DeepLinkError("the link names no server: add name=NAME")
    if len(name) > MAX_NAME_CHARS:
        raise DeepLinkError(f"the server name is longer than {MAX_NAME_CHARS} characters")
    problem = server_name_problem(name)
    if problem:
        raise DeepLinkError(problem)
    # A web page wrote it: it waits for a trust review before its first connect, like a
    # project server, though it lands in your global file (policy.trust.is_reviewed).
    return AddRequest(name, {**_fields(single, repeated), "from_link": True})


def _fields(single: Mapping[str, str], repeated: Mapping[str, list[str]]) -> dict[str, Any]:
    command, url = single.get("command"), single.get("url")
    if command is not None and url is not None:
        raise DeepLinkError("the link gives both command and url; a server has one of them")
    if command is None and url is None:
        raise DeepLinkError("the link says neither command=... nor url=...: nothing to add")
    fields: dict[str, Any] = {}
    if command is not None:
        try:
            words = shlex.split(command)
        except ValueError as exc:
            raise DeepLinkError(f"the link's command does not parse: {exc}") from None
        words += repeated["arg"]
        if not words:
            raise DeepLinkError("the link's command is empty")
        if len(words) > MAX_ARGS:
            raise DeepLinkError(f"the link's command has {len(words)} words (at most {MAX_ARGS})")
        for key in ("header", "transport"):
            if repeated.get(key) or single.get(key):
                raise DeepLinkError(f"{key} is for url servers; a command server takes env")
        fields["command"] = words[0]
        if words[1:]:
            fields["args"] = words[1:]
        if repeated["env"]:
            fields["env"] = _pairs(repeated["env"], "env", "=")
        return fields
    assert url is not None
    target = urlsplit(url)
    if target.scheme not in ("http", "https") or not target.hostname:
        raise DeepLinkError(f"the link's url must be an http(s) address, not {_shorten(url)!r}")
    if repeated["arg"] or repeated["env"]:
        raise DeepLinkError("arg and env are for command servers; a url server takes header")
    fields["url"] = url
    transport = single.get("transport")
    if transport not in (None, "", "http", "streamable-http", "sse"):
        raise DeepLinkError(f"unknown transport {transport!r} (use http or sse)")
    if transport == "sse":
        fields["transport"] = "sse"
    if repeated["header"]:
        fields["headers"] = _pairs(repeated["header"], "header", ":")
    return fields


def _pairs(items: list[str], what: str, sep: str) -> dict[str, str]:
    if len(items) > MAX_PAIRS:
        raise DeepLinkError(f"the link gives {len(items)} {what} values (at most {MAX_PAIRS})")
    out: dict[str, str] = {}
    for item in items:
        key, found, value = item.partition(sep)
        if not found and sep == ":":
            key, found, value = item.partition("=")
        key = key.strip()
        if not found or not key:
            raise DeepLinkError(f"the link's {what} {_shorten(item)!r}: write it as KEY{sep}VALUE")
        if key in out:
            raise DeepLinkError(f"the link gives {what} {key!r} twice")
        out[key] = value.strip() if sep == ":" else value
    return out


def prepare(request: AddRequest, *, target: Path | None = None) -> Prepared:
    """Render the new server into its file (global scope, as ``mcp add`` chooses) and
    validate it; DeepLinkError if the name is taken or the result would not load."""
    path = target if target is not None else choose_file(Scope.GLOBAL, None)
    taken = [p for p in defining_files(request.name, None)] if target is None else []
    try:
        document = ConfigDocument.open(path)
    except (DocumentParseError, OSError) as exc:
        raise DeepLinkError(f"{path} cannot be read, so nothing was added: {exc}") from None
    if taken or document.has_server(request.name):
        where = taken[0] if taken else path
        raise DeepLinkError(
            f"a server named {request.name!r} already exists in {where}; nothing was added"
        )
    try:
        document.add_server(request.name, request.fields)
    except EditError as exc:
        raise DeepLinkError(f"the server cannot be written: {exc}") from None
    config = document.check(Scope.GLOBAL)
    errors = [d for d in config.diagnostics if d.is_error and d.server in (request.name, None)]
    if errors:
        raise DeepLinkError(f"the link's server would not load: {errors[0]}")
    spec = next((s for s in config.servers if s.name == request.name), None)
    return Prepared(request, document, _added(document), document.diff(), spec)


def _added(document: ConfigDocument) -> str:
    before = document.original_text.splitlines()
    after = document.text().splitlines()
    lines = [
        line[1:]
        for line in difflib.unified_diff(before, after, lineterm="", n=0)
        if line.startswith("+") and not line.startswith("+++")
    ]
    return "\n".join(lines).strip("\n") + "\n"


def _shorten(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
