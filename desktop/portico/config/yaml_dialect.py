"""Reading ``config.yaml``: servers under ``mcp_servers:``, settings under ``mcp:``,
``secrets:``, ``approvals:`` and ``profile``. Every other top-level key belongs to another
part of the file and is left alone without a word, except one that holds server entries
under a near miss of ``mcp_servers`` (``servers:``, ``mcpServers:``): that gets a warning.

ruamel.yaml's round-trip loader keeps the line of every key (``.lc``).
"""

from __future__ import annotations

import contextlib
import re
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from portico.config import schema
from portico.config.masking import mask_text
from portico.config.model import Dialect, Scope
from portico.config.parse_count import counted
from portico.config.raw import KeyPath, RawFile, RawServer, RawSetting


def _yaml() -> YAML:
    yaml = YAML(typ="rt")
    yaml.allow_duplicate_keys = False
    return yaml


def parse(text: str, path: Path, scope: Scope) -> RawFile:
    raw = RawFile(path=path, scope=scope, dialect=Dialect.YAML)
    counted(path)
    try:
        doc = _yaml().load(text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = safe_problem(exc.problem or exc.context or "syntax error")
        raw.parsed = False
        raw.error(
            f"not valid YAML: {problem}; fix the file (the servers it defined keep their "
            "previous settings until it parses)",
            line=mark.line + 1 if mark else None,
            column=mark.column + 1 if mark else None,
        )
        return raw
    except YAMLError as exc:
        raw.parsed = False
        raw.error(f"not valid YAML: {safe_problem(str(exc))}")
        return raw
    if doc is None:
        return raw
    if not isinstance(doc, dict):
        raw.parsed = False
        raw.error("the top of config.yaml must be a mapping (key: value lines)", line=1)
        return raw
    lines = key_lines(doc)

    def line(*path: str | int) -> int:
        while path:
            if path in lines:
                return lines[path]
            path = path[:-1]
        return 1

    for spec in schema.SETTINGS:
        if spec.yaml is None:
            continue
        node: Any = doc
        for part in spec.yaml[:-1]:
            node = node.get(part) if isinstance(node, dict) else None
        if isinstance(node, dict) and spec.yaml[-1] in node:
            raw.settings.append(
                RawSetting(spec.name, _plain(node[spec.yaml[-1]]), line(*spec.yaml))
            )
    raw.settings.sort(key=lambda s: s.line)
    for section in ("mcp", "secrets", "approvals", "oauth", "sandbox", "chat"):
        value = doc.get(section)
        known = [s.yaml[-1] for s in schema.SETTINGS if s.yaml and s.yaml[0] == section]
        if value is None:
            continue
        if not isinstance(value, dict):
            raw.warning(
                f"must be a mapping with {', '.join(known)}; ignored",
                line=line(section),
                key=section,
            )
            continue
        from portico.config.validate import suggestion

        for sub in value:
            if sub not in known:
                raw.warning(
                    f"unknown key, ignored{suggestion(str(sub), known)}",
                    line=line(section, sub),
                    key=f"{section}.{sub}",
                )

    if "models" in doc:
        raw.models.value = _plain(doc["models"])
        raw.models.line = line("models")
        raw.models.lines = {p[1:]: n for p, n in lines.items() if len(p) > 1 and p[0] == "models"}

    for key in doc:
        if _misplaced_servers(key, doc[key]):
            raw.warning(
                f"looks like MCP servers, but Portico reads them from "
                f"{schema.YAML_SERVERS_KEY}: (rename the key to start these servers); ignored",
                line=line(key),
                key=str(key),
            )
    servers = doc.get(schema.YAML_SERVERS_KEY)
    if servers is None:
        return raw
    if not isinstance(servers, dict):
        raw.error(
            "must be a mapping of server names to their settings; no server in this file starts",
            line=line(schema.YAML_SERVERS_KEY),
            key=schema.YAML_SERVERS_KEY,
        )
        return raw
    # Each server's lines, grouped in one pass (a scan of every line per server made a
    # 400-server file quadratic).
    by_server: dict[Any, dict[KeyPath, int]] = {}
    for p, n in lines.items():
        if len(p) > 2 and p[0] == schema.YAML_SERVERS_KEY:
            by_server.setdefault(p[1], {})[p[2:]] = n
    for name, entry in servers.items():
        prefix = (schema.YAML_SERVERS_KEY, name)
        server_lines = by_server.get(name, {})
        raw.servers.append(RawServer(str(name), _plain(entry), line(*prefix), server_lines))
    return raw


_SERVER_KEYS = ("command", "url", "args")


def _misplaced_servers(key: Any, value: Any) -> bool:
    """A top-level ``servers:`` / ``mcpServers:`` / ``mcp-servers:``... that holds server
    entries: a slip for ``mcp_servers:``, not another program's part of the file."""
    if key == schema.YAML_SERVERS_KEY or not isinstance(key, str) or not isinstance(value, dict):
        return False
    if re.sub(r"[-_\s]", "", key).lower() not in ("servers", "mcpservers", "mcpserver"):
        return False
    entries = list(value.values())
    return bool(entries) and all(
        isinstance(e, dict) and any(k in e for k in _SERVER_KEYS) for e in entries
    )


_DUPLICATE = re.compile(r'found duplicate key "(?P<key>[^"]*)" with value .*', re.S)


def safe_problem(problem: str) -> str:
    """A parser's complaint without the values it quotes: a duplicate key's two values are
    often two tokens ("Bearer sk-..."), and any URL in it is masked."""
    duplicate = _DUPLICATE.match(problem)
    if duplicate:
        return f'duplicate key "{duplicate.group("key")}" (values not shown)'
    return mask_text(problem)


def _plain(value: Any) -> Any:
    """ruamel's round-trip types as plain dict / list / str / int / float / bool."""
    if isinstance(value, dict):
        return {(k if isinstance(k, str) else str(k)): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    return value


def key_lines(doc: Any, prefix: KeyPath = ()) -> dict[KeyPath, int]:
    """``{("mcp_servers", "github", "timeout"): 7, ...}`` (1-based lines)."""
    lines: dict[KeyPath, int] = {}

    def walk(node: Any, path: KeyPath) -> None:
        if isinstance(node, CommentedMap):
            for k, v in node.items():
                with contextlib.suppress(KeyError, TypeError):
                    lines[(*path, k)] = node.lc.key(k)[0] + 1
                walk(v, (*path, k))
        elif isinstance(node, CommentedSeq):
            for i, v in enumerate(node):
                with contextlib.suppress(KeyError, TypeError):
                    lines[(*path, i)] = node.lc.item(i)[0] + 1
                walk(v, (*path, i))

    walk(doc, prefix)
    return lines
