"""Round-trip edits of the ``models`` keys of one config file (providers and the default
model), through ``ConfigDocument``'s key-path edits, so every other byte stays.

In ``mcp.toml`` a provider is a ``[models.providers.NAME]`` table (an inline
``providers = { ... }`` stays inline) and the default is the top-level ``default_model``;
in ``config.yaml`` a provider is a block under ``models.providers`` and the default is
``models.default``. Values are plain Python (lists, strings, bools); the API key is a
``${keyring:NAME}`` / ``${env:NAME}`` reference, never a key (the validator refuses one).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from portico.config.document import ConfigDocument, EditError
from portico.config.model import Dialect
from portico.config.models_config import KEYS
from portico.config.validate import server_name_problem

PROVIDERS = ("models", "providers")


def default_key(dialect: Dialect) -> tuple[str, ...]:
    """Where the default model is written in this dialect."""
    return ("default_model",) if dialect is Dialect.TOML else ("models", "default")


def providers(doc: ConfigDocument) -> dict[str, dict[str, Any]]:
    """The file's providers as written (plain values), in file order; a malformed
    ``models`` value reads as no providers (the validator reports it)."""
    value = doc.get_setting(PROVIDERS)
    if not isinstance(value, dict):
        return {}
    return {str(k): dict(v) if isinstance(v, dict) else {} for k, v in value.items()}


def provider(doc: ConfigDocument, name: str) -> dict[str, Any] | None:
    return providers(doc).get(name)


def default_model(doc: ConfigDocument) -> str | None:
    value = doc.get_setting(default_key(doc.dialect))
    return value if isinstance(value, str) else None


def add_provider(doc: ConfigDocument, name: str, fields: Mapping[str, Any]) -> None:
    """Add a provider; EditError for a bad or taken name, or an unknown key."""
    problem = server_name_problem(name)
    if problem:
        raise EditError(f"{doc.path}: {problem.replace('server name', 'provider name')}")
    for key in fields:
        _require_key(doc, name, key)
    current = doc.get_setting(PROVIDERS)
    if isinstance(current, dict) and name in current:
        raise EditError(
            f"{doc.path}: a provider named {name!r} already exists; edit it or pick another name"
        )
    models = doc.get_setting(("models",))
    if models is not None and not isinstance(models, dict):
        raise EditError(f"{doc.path}: models is not a table; fix it in the raw tab first")
    if current is not None and not isinstance(current, dict):
        raise EditError(f"{doc.path}: models.providers is not a table; fix it in the raw tab")
    values = dict(fields)
    if doc.dialect is Dialect.YAML:
        if models is None:
            doc.set_setting(("models",), {"providers": {name: values}})
        elif current is None:
            doc.set_setting(PROVIDERS, {name: values})
        else:
            doc.set_setting((*PROVIDERS, name), values)
        return
    inline = _toml_inline_depth(doc)
    if models is None:
        doc.set_setting(("models",), _super(name, values, depth=2))
    elif inline is not None and inline <= 2:
        # models (or models.providers) is an inline table: the provider joins it inline
        doc.set_setting((*PROVIDERS, name), values)
    elif current is None:
        doc.set_setting(PROVIDERS, _super(name, values, depth=1))
    else:
        doc.set_setting((*PROVIDERS, name), _table(values))


def put_provider(doc: ConfigDocument, name: str, fields: Mapping[str, Any]) -> None:
    """Add the provider, or give an existing one exactly ``fields``, in place (its
    place in the file and its comments stay; keys not in ``fields`` go)."""
    current = provider(doc, name)
    if current is None:
        add_provider(doc, name, fields)
        return
    for key in fields:
        _require_key(doc, name, key)
    for key, value in fields.items():
        if current.get(key) != value:
            set_provider_key(doc, name, key, value)
    for key in current:
        if key not in fields:
            doc.unset_setting((*PROVIDERS, name, key))


def set_provider_key(doc: ConfigDocument, name: str, key: str, value: Any) -> None:
    """Set one key of a provider; ``None`` (or an empty string or list) removes it."""
    _require_provider(doc, name)
    _require_key(doc, name, key)
    if value is None or value == "" or value == [] or value == ():
        doc.unset_setting((*PROVIDERS, name, key))
        return
    if isinstance(value, tuple):
        value = list(value)
    doc.set_setting((*PROVIDERS, name, key), value)


def remove_provider(doc: ConfigDocument, name: str) -> bool:
    """Remove a provider (and its comments). The default model, when it names this
    provider, goes too (it would name a provider that is not configured): returns True
    then. An emptied ``models`` table is removed as well."""
    _require_provider(doc, name)
    doc.unset_setting((*PROVIDERS, name))
    if doc.get_setting(PROVIDERS) == {}:
        doc.unset_setting(PROVIDERS)
    if doc.get_setting(("models",)) == {}:
        doc.unset_setting(("models",))
    default = default_model(doc)
    if default is not None and default.split("/", 1)[0] == name:
        set_default_model(doc, None)
        return True
    return False


def set_default_model(doc: ConfigDocument, ref: str | None) -> None:
    """``PROVIDER/model`` (or a provider name) as the default; None removes it."""
    key = default_key(doc.dialect)
    if ref is None or not ref.strip():
        doc.unset_setting(key)
        if doc.dialect is Dialect.YAML and doc.get_setting(("models",)) == {}:
            doc.unset_setting(("models",))
        return
    models = doc.get_setting(("models",))
    if doc.dialect is Dialect.YAML and models is not None and not isinstance(models, dict):
        raise EditError(f"{doc.path}: models is not a mapping; fix it in the raw tab first")
    doc.set_setting(key, ref.strip())


# --- helpers -------------------------------------------------------------------------------


def _require_provider(doc: ConfigDocument, name: str) -> None:
    names = list(providers(doc))
    if name not in names:
        shown = ", ".join(names) or "none"
        raise EditError(f"{doc.path}: no provider named {name!r} (providers here: {shown})")


def _require_key(doc: ConfigDocument, name: str, key: str) -> None:
    if key not in KEYS:
        from portico.config.validate import suggestion

        raise EditError(
            f"{doc.path}: models.providers.{name}.{key}: not a key of a provider"
            f"{suggestion(key, KEYS)}"
        )


def _toml_inline_depth(doc: ConfigDocument) -> int | None:
    """1 when ``models`` is an inline table, 2 when ``models.providers`` is; else None."""
    import tomlkit
    from tomlkit.items import InlineTable

    node: Any = tomlkit.parse(doc.text())
    for depth, part in enumerate(PROVIDERS, start=1):
        if part not in node:
            return None
        node = node[part]
        if isinstance(node, InlineTable):
            return depth
    return None


def _table(fields: Mapping[str, Any]) -> Any:
    """A ``[models.providers.NAME]`` table (not an inline table on one long line)."""
    import tomlkit

    table = tomlkit.table()
    for key, value in fields.items():
        table.add(key, value)
    return table


def _super(name: str, fields: Mapping[str, Any], *, depth: int) -> Any:
    """Super tables down to the provider's table, so only its ``[models.providers.NAME]``
    header is written: ``depth`` 2 for ``models``, 1 for ``models.providers``."""
    import tomlkit

    node = tomlkit.table(is_super_table=True)
    node.add(name, _table(fields))
    if depth == 2:
        outer = tomlkit.table(is_super_table=True)
        outer.add("providers", node)
        return outer
    return node


def prices_text(value: Any) -> str:
    """``{m: {input: 2, output: 8}}`` -> ``"m: 2 / 8"`` (one line for a form field)."""
    if not isinstance(value, dict):
        return "" if value is None else str(value)
    parts = []
    for model, entry in value.items():
        if isinstance(entry, dict):
            parts.append(f"{model}: {entry.get('input', '?')} / {entry.get('output', '?')}")
        else:
            parts.append(f"{model}: {entry}")
    return ", ".join(parts)


def parse_prices(text: str) -> dict[str, Any] | str | None:
    """``"m: 2 / 8, n: 0.4 / 1.6"`` -> the ``prices`` value; text that does not read
    as prices comes back as it is, for the validator to say what is wrong with it."""
    if not text.strip():
        return None
    out: dict[str, Any] = {}
    for part in text.split(","):
        model, sep, amounts = part.rpartition(":")
        pair = amounts.split("/")
        if not sep or not model.strip() or len(pair) != 2:
            return text
        try:
            low, high = (float(a) for a in pair)
        except ValueError:
            return text
        out[model.strip()] = {"input": _number(low), "output": _number(high)}
    return out


def parse_number(text: str) -> int | float | str | None:
    """A form field's number (int when whole); other text as it is, for the validator."""
    text = text.strip()
    if not text:
        return None
    try:
        value = float(text.replace(",", "").replace("_", ""))
    except ValueError:
        return text
    return _number(value)


def _number(value: float) -> int | float:
    return int(value) if value.is_integer() else value
