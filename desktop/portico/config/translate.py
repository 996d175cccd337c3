"""Neutral server fields -> the spelling and units of one dialect.

Neutral fields are what presets, importers and ``portico mcp add`` produce: YAML spelling
and units (``command`` string + ``args`` list, ``env``, ``timeout`` in seconds,
``oauth.redirect_port``...). For ``mcp.toml`` they become ``command`` = [program, *args],
``environment``, durations in milliseconds (except ``*_seconds`` keys), ``callback_port``
and so on, as the key table in ``portico.config.schema`` says.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from portico.config import schema
from portico.config.model import Dialect

# Tables whose children are free-form names (tool names, variables), never schema keys.
_FREE_FORM = {"env", "headers", "tool_costs"}


def to_dialect(fields: Mapping[str, Any], dialect: Dialect) -> dict[str, Any]:
    """``fields`` (neutral) spelled for ``dialect``; key order is kept."""
    out = _translate(dict(fields), None, dialect)
    command = out.get("command")
    if dialect is Dialect.TOML:
        if isinstance(command, str):
            args = out.pop("args", None) or []
            out["command"] = [command, *[str(a) for a in args]]
        elif "args" in out and isinstance(command, list):
            out["command"] = [*command, *[str(a) for a in out.pop("args") or []]]
    elif isinstance(command, (list, tuple)):
        items = [str(c) for c in command]
        extra = [str(a) for a in out.get("args") or []]
        if items:
            rebuilt: dict[str, Any] = {}
            for key, value in out.items():
                if key == "command":
                    rebuilt["command"] = items[0]
                    rebuilt["args"] = items[1:] + extra
                elif key != "args":
                    rebuilt[key] = value
            if not rebuilt["args"]:
                del rebuilt["args"]
            out = rebuilt
    return out


def to_toml(fields: Mapping[str, Any]) -> dict[str, Any]:
    return to_dialect(fields, Dialect.TOML)


def _translate(fields: dict[str, Any], parent: str | None, dialect: Dialect) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in fields.items():
        spec = schema.lookup(Dialect.YAML, parent, key) or schema.lookup(dialect, parent, key)
        if spec is None:
            out[key] = value
            continue
        name = spec.spelling(dialect)
        if spec.type == "table" and isinstance(value, Mapping):
            out[name] = _translate(dict(value), spec.name, dialect)
        elif (
            spec.type == "duration"
            and isinstance(value, (int, float))
            and not isinstance(value, bool)
        ):
            out[name] = spec.to_dialect(value, dialect)
        elif spec.name in _FREE_FORM and isinstance(value, Mapping):
            out[name] = dict(value)
        else:
            out[name] = value
    return out
