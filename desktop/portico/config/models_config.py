"""The ``models`` keys: model providers and the default model, validated like servers.

YAML::

    models:
      providers:
        openai: {kind: openai, api_key: "${keyring:openai}", models: [gpt-4.1]}
        local: {kind: openai, base_url: "http://127.0.0.1:11434/v1", default_model: qwen3}
      default: openai/gpt-4.1

TOML: ``[models.providers.NAME]`` tables with the same keys, and a top-level
``default_model = "NAME/model"``.

``api_key`` must be a ``${keyring:NAME}`` / ``${env:NAME}`` reference: a plain key is an
error that says how to store it. Only the user's own (global) files may configure models:
a project file that sets any of these keys gets a warning and is ignored there, so a
cloned repository cannot redirect your prompts.
"""

from __future__ import annotations

import math
from typing import Any
from urllib.parse import urlsplit

from portico.config import masking, secrets
from portico.config.model import Dialect, ModelPrice, ModelsConfig, ProviderSpec, Scope, Source
from portico.config.raw import KeyPath, RawFile, RawModels

KINDS = ("openai", "anthropic")
KEYS = (
    "kind",
    "base_url",
    "api_key",
    "models",
    "default_model",
    "max_tokens",
    "temperature",
    "vision",
    "headers",
    "prices",
    "currency",
    "spend_limit",
    "context_length",
    "projects",
    "native_tool_search",
)
MAX_TOKENS_LIMIT = 1_000_000
CONTEXT_LIMIT = 100_000_000
_SECRET_HEADERS = ("authorization", "x-api-key", "api-key", "proxy-authorization")


def _where(dialect: Dialect) -> tuple[str, str]:
    """(prefix of provider keys, the default key) as written in this dialect."""
    if dialect is Dialect.TOML:
        return "models.providers", "default_model"
    return "models.providers", "models.default"


class _Reader:
    def __init__(self, file: RawFile, raw: RawModels) -> None:
        self.file = file
        self.raw = raw

    def line(self, *path: str | int) -> int:
        p: KeyPath = path
        while p:
            if p in self.raw.lines:
                return self.raw.lines[p]
            p = p[:-1]
        return self.raw.line or 1

    def error(self, message: str, key: str, *path: str | int) -> None:
        self.file.error(message, line=self.line(*path), key=key)

    def warning(self, message: str, key: str, *path: str | int) -> None:
        self.file.warning(message, line=self.line(*path), key=key)

    def providers(self) -> list[ProviderSpec]:
        value = self.raw.value
        if value is None:
            return []
        if not isinstance(value, dict):
            self.error("must be a mapping with providers (and default); ignored", "models")
            return []
        allowed = ("providers",) if self.file.dialect is Dialect.TOML else ("providers", "default")
        from portico.config.validate import suggestion

        for key in value:
            if key not in allowed:
                hint = suggestion(str(key), list(allowed))
                if self.file.dialect is Dialect.TOML and key == "default":
                    hint = "; in mcp.toml the default is the top-level default_model"
                self.warning(f"unknown key, ignored{hint}", f"models.{key}", key)
        providers = value.get("providers")
        if providers is None:
            return []
        if not isinstance(providers, dict):
            self.error(
                "must be a mapping of provider names to their settings; ignored",
                "models.providers",
                "providers",
            )
            return []
        out: list[ProviderSpec] = []
        for name, entry in providers.items():
            spec = self.provider(str(name), entry)
            if spec is not None:
                out.append(spec)
        return out

    def provider(self, name: str, entry: Any) -> ProviderSpec | None:
        from portico.config.validate import server_name_problem, suggestion

        prefix = f"models.providers.{name}"
        at = ("providers", name)
        problem = server_name_problem(name)
        if problem:
            self.error(problem.replace("server name", "provider name") + "; skipped", prefix, *at)
            return None
        if not isinstance(entry, dict):
            self.error("must be a mapping of settings (kind, base_url, ...); skipped", prefix, *at)
            return None
        ok = True
        fields: dict[str, Any] = {}
        for key, value in entry.items():
            key = str(key)
            where = f"{prefix}.{key}"
            path = (*at, key)
            if key not in KEYS:
                self.warning(f"unknown key, ignored{suggestion(key, KEYS)}", where, *path)
                continue
            checked = self.value(key, value, where, path)
            if checked is _BAD:
                ok = False
            else:
                fields[key] = checked
        if not ok:
            self.file.error(
                "is skipped until the errors above are fixed",
                line=self.line(*at),
                key=prefix,
            )
            return None
        models = fields.get("models", ())
        default = fields.get("default_model")
        source = Source(self.file.path, self.line(*at), self.file.scope, self.file.dialect)
        spec = ProviderSpec(name=name, source=source, **fields)
        if spec.kind == "openai" and spec.base_url is None and not spec.api_key:
            self.warning(
                "has neither base_url nor api_key: the public OpenAI API needs a key "
                "(store one with `portico secret set NAME` and write api_key: "
                '"${keyring:NAME}"), a local server needs its base_url',
                prefix,
                *at,
            )
        if not models and not default:
            self.warning(
                "names no model (models or default_model): pick one with /model "
                f"{name}/MODEL or `portico model list`",
                prefix,
                *at,
            )
        return spec

    def value(self, key: str, value: Any, where: str, path: KeyPath) -> Any:
        def bad(message: str) -> Any:
            self.error(message, where, *path)
            return _BAD

        if key == "kind":
            if not isinstance(value, str) or value.lower() not in KINDS:
                return bad(f"must be openai or anthropic, not {value!r}")
            return value.lower()
        if key == "base_url":
            if not isinstance(value, str) or not value.strip():
                return bad("must be a URL such as http://127.0.0.1:11434/v1")
            parts = urlsplit(value.strip())
            if parts.scheme not in ("http", "https") or not parts.netloc:
                return bad(f"must be an http:// or https:// URL, not {masking.mask_url(value)!r}")
            return value.strip().rstrip("/")
        if key == "api_key":
            if not isinstance(value, str):
                return bad('must be a reference such as "${keyring:NAME}" or "${env:VAR}"')
            if not value.strip():
                return None
            problems = secrets.problems(value)
            if problems:
                return bad("; ".join(problems))
            if not secrets.has_references(value) or secrets.literal_text(value).strip():
                name = where.split(".")[2]
                return bad(
                    "holds a plain API key; keys never go in config files. Store it with "
                    f'`portico secret set {name}` and write api_key: "${{keyring:{name}}}" '
                    '(or "${env:VAR}" for an environment variable)'
                )
            return value
        if key == "models":
            if isinstance(value, str):
                value = [value]
            if not isinstance(value, list) or not all(
                isinstance(v, str) and v.strip() for v in value
            ):
                return bad("must be a list of model names, e.g. [gpt-4.1, gpt-4.1-mini]")
            return tuple(dict.fromkeys(v.strip() for v in value))
        if key == "default_model":
            if not isinstance(value, str) or not value.strip():
                return bad("must be a model name")
            return value.strip()
        if key == "max_tokens":
            if isinstance(value, bool) or not isinstance(value, int):
                return bad(f"must be a whole number of tokens, not {value!r}")
            if not 1 <= value <= MAX_TOKENS_LIMIT:
                return bad(f"must be between 1 and {MAX_TOKENS_LIMIT:,}, not {value}")
            return value
        if key == "temperature":
            if isinstance(value, bool) or not isinstance(value, int | float):
                return bad(f"must be a number between 0 and 2, not {value!r}")
            if not math.isfinite(value) or not 0 <= value <= 2:
                return bad(f"must be between 0 and 2, not {value}")
            return float(value)
        if key in ("vision", "projects", "native_tool_search"):
            if not isinstance(value, bool):
                return bad(f"must be true or false, not {value!r}")
            return value
        if key == "prices":
            return self.prices(value, where, path)
        if key == "currency":
            if not isinstance(value, str) or not value.strip() or len(value.strip()) > 8:
                return bad(f"must be a short currency name such as USD or EUR, not {value!r}")
            return value.strip()
        if key == "spend_limit":
            if isinstance(value, bool) or not isinstance(value, int | float):
                return bad(f"must be an amount in the provider's currency, not {value!r}")
            if not math.isfinite(value) or value <= 0:
                return bad(f"must be more than 0, not {value}")
            return float(value)
        if key == "context_length":
            if isinstance(value, bool) or not isinstance(value, int):
                return bad(f"must be a whole number of tokens, not {value!r}")
            if not 1 <= value <= CONTEXT_LIMIT:
                return bad(f"must be between 1 and {CONTEXT_LIMIT:,}, not {value}")
            return value
        # headers
        if not isinstance(value, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in value.items()
        ):
            return bad("must be a mapping of header names to text values")
        pairs: list[tuple[str, str]] = []
        for header, text in value.items():
            problems = secrets.problems(text)
            if problems:
                return bad(f"{header}: {'; '.join(problems)}")
            if header.lower() in _SECRET_HEADERS and not secrets.has_references(text):
                return bad(
                    f"{header} holds a plain secret; store it with `portico secret set NAME` "
                    'and write "${keyring:NAME}" in its place'
                )
            pairs.append((header, text))
        return tuple(pairs)

    def prices(self, value: Any, where: str, path: KeyPath) -> Any:
        example = "e.g. {gpt-4.1: {input: 2.0, output: 8.0}} (per million tokens)"
        if not isinstance(value, dict):
            self.error(f"must map model names to their prices, {example}", where, *path)
            return _BAD
        out: list[tuple[str, ModelPrice]] = []
        for model, entry in value.items():
            at, key = (*path, str(model)), f"{where}.{model}"
            if not isinstance(entry, dict) or set(entry) != {"input", "output"}:
                self.error(f"must have an input and an output price only, {example}", key, *at)
                return _BAD
            amounts: list[float] = []
            for side in ("input", "output"):
                amount = entry[side]
                if isinstance(amount, bool) or not isinstance(amount, int | float):
                    self.error(f"must be a number, not {amount!r}", f"{key}.{side}", *at, side)
                    return _BAD
                if not math.isfinite(amount) or amount < 0:
                    self.error(f"must be 0 or more, not {amount}", f"{key}.{side}", *at, side)
                    return _BAD
                amounts.append(float(amount))
            out.append((str(model), ModelPrice(amounts[0], amounts[1])))
        return tuple(out)

    def default(self) -> tuple[str | None, int]:
        if self.file.dialect is Dialect.TOML:
            value, line = self.raw.default, self.raw.default_line
        else:
            value = self.raw.value.get("default") if isinstance(self.raw.value, dict) else None
            line = self.line("default")
        if value is None:
            return None, 0
        key = _where(self.file.dialect)[1]
        if not isinstance(value, str) or not value.strip():
            self.file.error('must be "PROVIDER/model" (or a provider name)', line=line, key=key)
            return None, 0
        return value.strip(), line


_BAD = object()


def read_models(file: RawFile, raw: RawModels) -> ModelsConfig:
    """The file's providers and default; diagnostics go into ``file``. A project file's
    models are refused with a warning (only your own files choose where prompts go)."""
    if not raw.present or file.blocked or not file.parsed:
        return ModelsConfig()
    if file.scope is Scope.PROJECT:
        found = [("models", raw.line), (_where(file.dialect)[1], raw.default_line)]
        for key, line in found:
            if line:
                file.warning(
                    "ignored: a project file may not add or change model providers or the "
                    "default model (a cloned repository must not redirect your prompts); set "
                    "them in your own config (`portico model add`)",
                    line=line,
                    key=key,
                )
        return ModelsConfig()
    reader = _Reader(file, raw)
    providers = reader.providers()
    default, line = reader.default()
    source = Source(file.path, line, file.scope, file.dialect) if default is not None else None
    return ModelsConfig(providers=tuple(providers), default=default, default_source=source)


def merge_models(parts: list[tuple[RawFile, ModelsConfig]]) -> tuple[ModelsConfig, list[str]]:
    """Both global files together. A provider defined in both is an error naming both
    places (the first one is used); returns the merged config and the problems."""
    providers: dict[str, ProviderSpec] = {}
    default: str | None = None
    default_source: Source | None = None
    for raw, models in parts:
        for spec in models.providers:
            first = providers.get(spec.name)
            if first is not None:
                raw.error(
                    f"is also defined in {first.source.path}:{first.source.line}; that one is "
                    "used: define each provider in one file",
                    line=spec.source.line,
                    key=f"models.providers.{spec.name}",
                )
                continue
            providers[spec.name] = spec
        if models.default is not None and default is None:
            default, default_source = models.default, models.default_source
        elif models.default is not None and default_source is not None:
            source = models.default_source
            raw.warning(
                f"is also set to {default} in {default_source.path}:{default_source.line}; "
                "that value is used: set the default model in one file only",
                line=source.line if source else None,
                key=_where(raw.dialect)[1],
            )
    config = ModelsConfig(tuple(providers.values()), default, default_source)
    if default is not None and default_source is not None:
        provider = default.split("/", 1)[0]
        if provider not in providers:
            owner = next((raw for raw, _m in parts if raw.path == default_source.path), None)
            names = ", ".join(providers) or "none is configured"
            if owner is not None:
                owner.error(
                    f"names the provider '{provider}', which is not configured ({names})",
                    line=default_source.line,
                    key=_where(default_source.dialect)[1],
                )
            config = ModelsConfig(tuple(providers.values()), None, None)
    return config, []
