"""``portico config example mcp``: every key of a dialect, commented out, from schema.py.

Settings are commented as ``#key = value`` (no space after ``#``); prose is ``# text``.
Removing the ``#`` right before every setting gives a file that parses and validates.
"""

from __future__ import annotations

import json
from typing import Any

import tomlkit

from portico.config import schema
from portico.config.model import Dialect
from portico.config.schema import KeySpec, SettingSpec, fmt

STDIO_NAME = "example-stdio"
HTTP_NAME = "example-http"


def _shown(spec: KeySpec, dialect: Dialect) -> Any:
    value = spec.example if spec.example is not None else spec.default
    if spec.name == "command" and dialect is Dialect.YAML:
        return value[0]
    if spec.name == "args" and dialect is Dialect.YAML:
        return list(schema.key("command").example[1:])
    value = spec.to_dialect(value, dialect)
    return int(value) if isinstance(value, float) and value.is_integer() else value


def _note(spec: KeySpec, dialect: Dialect) -> str:
    extra: list[str] = []
    unit = spec.unit(dialect)
    if spec.min is not None and spec.max is not None:
        low, high = spec.to_dialect(spec.min, dialect), spec.to_dialect(spec.max, dialect)
        extra.append(f"{fmt(low)} to {fmt(high)}" + (f" {unit}" if unit else ""))
    elif unit:
        extra.append(unit)
    if spec.example is not None:
        extra.append("example value")
    if spec.choices and spec.type == "choice":
        extra.append(" | ".join(spec.choices))
    return spec.help + (f" ({'; '.join(extra)})" if extra else "")


def _toml_value(value: Any) -> str:
    if isinstance(value, dict):
        inner = ", ".join(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in value.items())
        return "{ " + inner + " }" if inner else "{}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    text: str = tomlkit.item(value).as_string()
    return text


def _toml_key(key: str) -> str:
    return key if key.replace("-", "").replace("_", "").isalnum() else json.dumps(key)


def _yaml_value(value: Any) -> str:
    if isinstance(value, dict):
        inner = ", ".join(f"{k}: {_yaml_value(v)}" for k, v in value.items())
        return "{" + inner + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_yaml_value(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    return fmt(value)


def _keys_for(server: str) -> list[KeySpec]:
    """The keys shown on one example server: stdio-only and general keys on the stdio
    server, HTTP-only keys on the HTTP one (so each key appears once)."""
    want = ("stdio", "any") if server == STDIO_NAME else ("remote",)
    return [spec for spec in schema.KEYS if spec.applies in want]


def _setting_line(spec: SettingSpec, dialect: Dialect, indent: str, key: str) -> str:
    value = spec.default if spec.default is not None else spec.example
    text = _toml_value(value) if dialect is Dialect.TOML else _yaml_value(value)
    sep = " =" if dialect is Dialect.TOML else ":"
    return f"{indent}#{key}{sep} {text}  # {spec.help}"


# One example provider: (key, value, what it means). Prices are the person's to write:
# there are no built-in ones (a price table Portico ships would go stale unseen).
MODEL_KEYS: tuple[tuple[str, Any, str], ...] = (
    ("kind", "openai", "openai (any OpenAI-compatible server) | anthropic"),
    ("base_url", "http://127.0.0.1:11434/v1", "the server; unset: the kind's public API"),
    ("models", ["example-model"], "the models offered in the pickers"),
    ("max_tokens", 4096, "the longest answer, in tokens"),
    ("context_length", 32768, "tokens one request may hold (the context meter warns)"),
    ("currency", "USD", "of the prices and the spend limit"),
    ("spend_limit", 1.0, "per chat: a request that would pass it asks first"),
    ("projects", False, "a project's chat.model may name this provider's models"),
    ("native_tool_search", True, "anthropic: deferred tools behind the API's own tool search"),
)
MODEL_PRICES = {"example-model": {"input": 0.5, "output": 1.5}}
PRICES_HELP = "price per million tokens, input and output, per model (in currency)"


def toml_example() -> str:
    d = Dialect.TOML
    out = [
        "# Portico MCP servers (mcp.toml): every key with its default, commented out.",
        "# Remove the # in front of a setting to use it; lines starting '# ' are notes.",
        "# Global file: <config dir>/mcp.toml. Project file: <project>/.portico/mcp.toml;",
        "# a project server replaces a global server of the same name.",
        "# Durations are in milliseconds here, except keys ending in _seconds.",
        "# Secrets can be references: ${env:VAR} or ${keyring:NAME} (`portico secret set`).",
        "",
    ]
    for setting in schema.SETTINGS:
        if setting.toml is not None:
            out.append(_setting_line(setting, d, "", ".".join(setting.toml)))
    for server, title in (
        (STDIO_NAME, "A local server, started as a process (stdio)."),
        (HTTP_NAME, "A remote server over HTTP (Streamable HTTP, or SSE with transport)."),
    ):
        out += ["", f"# {title}", f"#[mcp.{server}]"]
        keys = _keys_for(server)
        tables = [s for s in keys if s.type == "table"]
        for spec in keys:
            if spec.parent is None and spec.type != "table":
                value = _toml_value(_shown(spec, d))
                out.append(f"#{spec.spelling(d)} = {value}  # {_note(spec, d)}")
        for table in tables:
            path = ".".join(table.path(d))
            out += [f"# {table.help}", f"#[mcp.{server}.{path}]"]
            for spec in keys:
                if spec.parent == table.name and spec.type != "table":
                    value = _toml_value(_shown(spec, d))
                    out.append(f"#{spec.spelling(d)} = {value}  # {_note(spec, d)}")
    out += ["", "# A model provider for the chat.", "#[models.providers.local]"]
    out += [f"#{k} = {_toml_value(v)}  # {note}" for k, v, note in MODEL_KEYS]
    out += [f"# The {PRICES_HELP}.", "#[models.providers.local.prices]"]
    out += [f"#{_toml_key(k)} = {_toml_value(v)}" for k, v in MODEL_PRICES.items()]
    return "\n".join(out) + "\n"


def yaml_example() -> str:
    d = Dialect.YAML
    out = [
        "# Portico MCP servers (the MCP part of config.yaml): every key with its default,",
        "# commented out. Remove the # in front of a setting to use it; lines starting",
        "# '# ' are notes. Other top-level keys of config.yaml are left alone.",
        "# Global file: <config dir>/config.yaml. Project file:",
        "# <project>/.portico/config.yaml; a project server replaces a global one.",
        "# Durations are in seconds. Secrets can be references: ${env:VAR} or",
        "# ${keyring:NAME} (`portico secret set NAME`).",
        "",
    ]
    sections: dict[str, list[SettingSpec]] = {}
    for spec in schema.SETTINGS:
        if spec.yaml is None:
            continue
        if len(spec.yaml) == 1:
            out.append(_setting_line(spec, d, "", spec.yaml[0]))
        else:
            sections.setdefault(spec.yaml[0], []).append(spec)
    for section, specs in sections.items():
        out.append(f"#{section}:")
        out += [_setting_line(spec, d, "  ", spec.yaml[-1]) for spec in specs if spec.yaml]
    out += ["", f"#{schema.YAML_SERVERS_KEY}:"]
    for server, title in (
        (STDIO_NAME, "A local server, started as a process (stdio)."),
        (HTTP_NAME, "A remote server over HTTP (Streamable HTTP, or SSE with transport)."),
    ):
        out += [f"  # {title}", f"  #{server}:"]
        _yaml_keys(_keys_for(server), None, "    ", out)
    out += ["", "#models:", "  # A model provider for the chat.", "  #providers:", "    #local:"]
    out += [f"      #{k}: {_yaml_value(v)}  # {note}" for k, v, note in MODEL_KEYS]
    out.append(f"      #prices:  # {PRICES_HELP}")
    out += [f"        #{k}: {_yaml_value(v)}" for k, v in MODEL_PRICES.items()]
    return "\n".join(out) + "\n"


def _yaml_keys(keys: list[KeySpec], parent: str | None, indent: str, out: list[str]) -> None:
    d = Dialect.YAML
    for spec in keys:
        if spec.parent != parent:
            continue
        if spec.type == "table":
            out.append(f"{indent}#{spec.spelling(d)}:  # {spec.help}")
            _yaml_keys(keys, spec.name, indent + "  ", out)
        else:
            value = _yaml_value(_shown(spec, d))
            out.append(f"{indent}#{spec.spelling(d)}: {value}  # {_note(spec, d)}")


def example(dialect: Dialect) -> str:
    return toml_example() if dialect is Dialect.TOML else yaml_example()


def uncomment(text: str) -> str:
    """The example with every setting switched on (what the round-trip test loads)."""
    import re

    return re.sub(r"(?m)^(\s*)#(?=[^\s#])", r"\1", text)
