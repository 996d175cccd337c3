"""Rules: one written server entry (either dialect) -> a ServerSpec, or None plus errors.

Any error skips the server; warnings (unknown keys, keys that do not apply to the
transport, an invalid identity_header) never do. Messages say what is allowed, in the
unit of the dialect they were written in.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Sequence
from typing import Any

from portico.config import schema, secrets
from portico.config.masking import is_secret_key, mask_text, mask_url, mask_value
from portico.config.model import (
    ClientCert,
    ElicitationSpec,
    IdentityHeader,
    OAuthSpec,
    Protocol,
    RuntimeSettings,
    SamplingSpec,
    SandboxSpec,
    Scope,
    ServerSpec,
    Source,
    ToolCost,
    ToolFilter,
    Transport,
    TrustLevel,
)
from portico.config.model import Dialect as D
from portico.config.raw import KeyPath, RawFile, RawServer
from portico.config.roots_check import root_problem
from portico.config.schema import KeySpec, fmt

NAME_RE = re.compile(r"[A-Za-z0-9_-]+")
_TRANSPORT_ALIASES = {
    "http": "http",
    "streamable-http": "http",
    "streamable_http": "http",
    "streamablehttp": "http",
    "sse": "sse",
    "stdio": "stdio",
}
_MISSING = object()
_BUDGET_KEYS = ("tool_costs", "spend_limit", "cost_unit")
_BUDGET_SKIP = "; the server is skipped so that a declared budget is never dropped"


def suggestion(word: str, candidates: Sequence[str]) -> str:
    """``"; did you mean timeout?"`` for the closest candidate, or ``""``."""
    close = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    if not close:
        close = [c for c in candidates if c.lower() == word.lower().replace("-", "_")]
    return f"; did you mean {close[0]}?" if close else ""


def one_of(choices: Sequence[str]) -> str:
    """``a or b`` / ``a, b or c``."""
    items = list(choices)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " or " + items[-1]


def machine_flow_needs(flow: object, values: dict[str, Any]) -> list[str]:
    """The oauth keys a sign-in flow without a person cannot do without."""
    if flow == "client_credentials":
        signed = values.get("oauth.client_assertion_key") or (
            values.get("oauth.token_endpoint_auth_method") == "private_key_jwt"
        )
        secret = "oauth.client_assertion_key" if signed else "oauth.client_secret"
        return ["oauth.client_id", secret]
    if flow == "cross_app":
        return [
            "oauth.client_id",
            "oauth.client_secret",
            "oauth.idp_token_endpoint",
            "oauth.id_token",
        ]
    return []


def server_name_problem(name: str) -> str | None:
    """Why ``name`` cannot be a server name, or None when it can."""
    if not name:
        return "a server name must not be empty"
    if "." in name:
        return f"server name '{name}' contains a dot: use ASCII letters, digits, - and _"
    if "__" in name:
        return (
            f"server name '{name}' contains '__', which Portico reserves to join server and "
            "tool names: use a single _ or -"
        )
    if not NAME_RE.fullmatch(name):
        return (
            f"server name '{name}' may only hold ASCII letters, digits, - and _ "
            "(no spaces, no dots)"
        )
    return None


def _describe(value: Any, dialect: D, *, secret: bool = False) -> str:
    """``value`` for an error message: URLs masked; a secret-bearing value never shown."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if secret and not isinstance(value, dict | list) and value is not None:
        if isinstance(value, str):
            return repr(mask_value(value))
        return "a number (value hidden)" if _is_number(value) else "a value (hidden)"
    if isinstance(value, str):
        return repr(mask_text(value))
    if isinstance(value, dict):
        return "a table" if dialect is D.TOML else "a mapping"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "empty (null)"
    if isinstance(value, int | float):
        return fmt(value)
    tag = getattr(value, "tag", None)
    tag_text = getattr(tag, "value", tag)
    if isinstance(tag_text, str) and tag_text:
        return f"a value tagged {tag_text} (quote it to make it a string)"
    return f"a {type(value).__name__} value"


def _kind(value: Any, dialect: D) -> str:
    """What ``value`` is, without showing it (for keys whose values may be secrets)."""
    if isinstance(value, str):
        return "a string"
    if _is_number(value):
        return "a number"
    if isinstance(value, bool | dict | list) or value is None:
        return _describe(value, dialect)
    if getattr(value, "tag", None) is not None:
        return "a tagged value (quote it to make it a string)"
    return f"a {type(value).__name__} value"


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


class _Checker:
    """Validates one server entry, collecting diagnostics into its file."""

    def __init__(self, file: RawFile, server: RawServer) -> None:
        self.file = file
        self.server = server
        self.dialect = file.dialect
        self.failed = False
        self.soft = False
        self.soft_failed = False

    # -- reporting ---------------------------------------------------------------------
    def error(self, path: KeyPath, message: str) -> None:
        if self.soft:
            # An invalid identity header is warned about and ignored; it never stops the
            # server from starting.
            self.soft_failed = True
            self.warning(path, f"{message}; identity_header is ignored")
            return
        if path and path[0] in _BUDGET_KEYS:
            message += _BUDGET_SKIP
        self.failed = True
        self.file.error(
            message,
            line=self.server.line_of(path),
            server=self.server.name,
            key=_join(path) or None,
        )

    def warning(self, path: KeyPath, message: str) -> None:
        self.file.warning(
            message,
            line=self.server.line_of(path),
            server=self.server.name,
            key=_join(path) or None,
        )

    @property
    def mapping_word(self) -> str:
        return "a table" if self.dialect is D.TOML else "a mapping"

    # -- collecting keys -----------------------------------------------------------------
    def collect(
        self,
        data: dict[str, Any],
        parent: str | None,
        prefix: KeyPath,
        out: dict[str, tuple[Any, KeyPath]],
    ) -> None:
        """Map written spellings to logical key names (recursing into tables)."""
        for written, value in data.items():
            path = (*prefix, written)
            spec = schema.lookup(self.dialect, parent, str(written))
            if spec is None:
                known = schema.spellings(self.dialect, parent)
                self.warning(path, f"unknown key, ignored{suggestion(str(written), known)}")
                continue
            if spec.name in out:
                first = _join(out[spec.name][1])
                self.error(path, f"{first} and {written} mean the same thing: keep one of them")
                continue
            if spec.type == "table":
                if not isinstance(value, dict):
                    self.error(
                        path,
                        f"must be {self.mapping_word} of settings, not "
                        f"{_describe(value, self.dialect)}",
                    )
                    continue
                out[spec.name] = (value, path)
                self.collect(value, spec.name, path, out)
                continue
            out[spec.name] = (value, path)

    # -- typed values --------------------------------------------------------------------
    def value(self, spec: KeySpec, raw: Any, path: KeyPath) -> Any:
        """``raw`` checked against ``spec`` and converted to model units; _MISSING if bad."""
        d = self.dialect
        got = _describe(raw, d, secret=spec.secret or is_secret_key(spec.name))
        kind = spec.type
        if kind == "bool":
            if isinstance(raw, bool):
                return raw
            return self._bad(path, f"must be true or false, not {got}")
        if kind in ("int", "number", "duration"):
            whole = kind == "int" or spec.in_ms(d)
            if not _is_number(raw) or raw != raw or (whole and not isinstance(raw, int)):
                if kind == "duration":
                    unit = spec.unit(d)
                    want = f"a whole number of {unit}" if whole else f"a number of {unit}"
                else:
                    want = "a whole number" if whole else "a number"
                return self._bad(path, f"must be {want}, not {got}")
            value = spec.from_dialect(raw, d)
            unit = spec.unit(d)
            suffix = f" ({unit})" if unit else ""
            if spec.max is not None and value > spec.max:
                limit = spec.to_dialect(spec.max, d)
                return self._bad(path, f"{fmt(raw)} is above the maximum {fmt(limit)}{suffix}")
            if spec.min is not None and value < spec.min:
                limit = spec.to_dialect(spec.min, d)
                return self._bad(path, f"{fmt(raw)} is below the minimum {fmt(limit)}{suffix}")
            return float(value) if kind == "duration" else value
        if kind == "string":
            if not isinstance(raw, str):
                return self._bad(path, f"must be a string, not {got}")
            if not raw.strip():
                return self._bad(path, "must not be empty")
            if spec.secret and not self._references_ok(path, raw):
                return _MISSING
            return raw
        if kind == "choice":
            text = raw.lower() if isinstance(raw, str) else raw
            if spec.name == "transport" and isinstance(text, str):
                text = _TRANSPORT_ALIASES.get(text, text)
                if text == "stdio":
                    return text
            if text not in spec.choices:
                allowed = one_of(spec.choices)
                return self._bad(path, f"must be {allowed}, not {got}")
            return text
        if kind == "string_list":
            if not isinstance(raw, list) or not all(isinstance(x, str) for x in raw):
                return self._bad(path, f"must be a list of strings, not {got}")
            if any(not x for x in raw):
                return self._bad(path, "must not contain empty strings")
            return tuple(raw)
        if kind == "mapping":
            return self._mapping(spec, raw, path)
        raise AssertionError(f"{spec.name}: {kind} is checked by its own rule")

    def _bad(self, path: KeyPath, message: str) -> Any:
        self.error(path, message)
        return _MISSING

    def _references_ok(self, path: KeyPath, text: str) -> bool:
        problems = secrets.problems(text)
        for problem in problems:
            self.error(path, problem)
        return not problems

    def _mapping(self, spec: KeySpec, raw: Any, path: KeyPath) -> Any:
        if not isinstance(raw, dict):
            return self._bad(
                path,
                f"must be {self.mapping_word} of names to strings, not "
                f"{_describe(raw, self.dialect)}",
            )
        items: list[tuple[str, str]] = []
        ok = True
        for name, value in raw.items():
            sub = (*path, name)
            if isinstance(value, bool):
                value = "true" if value else "false"
            elif _is_number(value):
                value = fmt(value)
            if not isinstance(value, str):
                hidden = spec.secret or is_secret_key(name)
                describe = _kind if hidden else _describe
                self.error(sub, f"must be a string, not {describe(value, self.dialect)}")
                ok = False
                continue
            if not str(name).strip():
                self.error(sub, "names must not be empty")
                ok = False
                continue
            if spec.secret and not self._references_ok(sub, value):
                ok = False
                continue
            items.append((str(name), value))
        return tuple(items) if ok else _MISSING

    # -- the whole entry -----------------------------------------------------------------
    def run(self) -> ServerSpec | None:
        server = self.server
        problem = server_name_problem(server.name)
        if problem:
            self.file.error(
                f"{problem}; this server is skipped", line=server.line, server=server.name
            )
            return None
        if not isinstance(server.data, dict):
            where = f"[mcp.{server.name}]" if self.dialect is D.TOML else f"{server.name}:"
            self.error(
                (),
                f"must be {self.mapping_word} of settings under {where}, not "
                f"{_describe(server.data, self.dialect)}; this server is skipped",
            )
            return None
        found: dict[str, tuple[Any, KeyPath]] = {}
        self.collect(server.data, None, (), found)
        values: dict[str, Any] = {}
        special = {"command", "client_cert", "tool_costs"}
        for name, (raw, path) in found.items():
            spec = schema.key(name)
            if spec.type == "table" or name in special or name.startswith("identity_header"):
                continue
            checked = self.value(spec, raw, path)
            if checked is not _MISSING:
                values[name] = checked

        transport = self._transport(found, values)
        command, args = self._command(found, values)
        cert = self._client_cert(found, values)
        costs = self._tool_costs(found)
        self._check_rules(found, values)
        if transport is not None:
            self._warn_not_applicable(found, transport)
        identity = self._identity(found, transport)
        oauth = self._oauth(found, values)
        server_roots = self._roots(found, values)
        sandbox = self._sandbox(found, values)

        if self.failed or transport is None:
            return None
        spend = values.get("spend_limit", 0)

        def get(name: str) -> Any:
            return values.get(name, schema.key(name).default)

        return ServerSpec(
            name=server.name,
            source=Source(self.file.path, server.line, self.file.scope, self.dialect),
            transport=transport,
            enabled=get("enabled"),
            command=command if transport is Transport.STDIO else None,
            args=args if transport is Transport.STDIO else (),
            env=values.get("env", ()) if transport is Transport.STDIO else (),
            cwd=values.get("cwd") if transport is Transport.STDIO else None,
            url=values.get("url") if transport is not Transport.STDIO else None,
            headers=values.get("headers", ()) if transport is not Transport.STDIO else (),
            oauth=oauth if transport is not Transport.STDIO else None,
            client_cert=cert if transport is not Transport.STDIO else None,
            ca_cert=values.get("ca_cert") if transport is not Transport.STDIO else None,
            identity_header=identity,
            protocol=Protocol(get("protocol")),
            timeout=get("timeout"),
            connect_timeout=get("connect_timeout"),
            lazy=get("lazy"),
            from_link=get("from_link"),
            idle_timeout_seconds=get("idle_timeout_seconds"),
            max_lifetime_seconds=get("max_lifetime_seconds"),
            always_load=get("always_load"),
            supports_parallel_tool_calls=get("supports_parallel_tool_calls"),
            events=get("events"),
            tools=ToolFilter(
                include=get("tools.include"),
                exclude=get("tools.exclude"),
                resources=get("tools.resources"),
                prompts=get("tools.prompts"),
            ),
            sampling=SamplingSpec(
                enabled=get("sampling.enabled"),
                model=get("sampling.model"),
                max_tokens_cap=get("sampling.max_tokens_cap"),
                timeout=get("sampling.timeout"),
                max_rpm=get("sampling.max_rpm"),
                max_tool_rounds=get("sampling.max_tool_rounds"),
                allowed_models=get("sampling.allowed_models"),
                log_level=get("sampling.log_level"),
            ),
            elicitation=ElicitationSpec(
                enabled=get("elicitation.enabled"),
                timeout=get("elicitation.timeout"),
                allow_url=get("elicitation.allow_url"),
            ),
            tool_costs=costs or (),
            spend_limit=float(spend) if spend else None,
            cost_unit=get("cost_unit"),
            trust=TrustLevel(get("trust")),
            roots=server_roots,
            sandbox=sandbox if transport is Transport.STDIO else SandboxSpec(),
        )

    # -- rules for single keys -----------------------------------------------------------
    def _transport(
        self, found: dict[str, tuple[Any, KeyPath]], values: dict[str, Any]
    ) -> Transport | None:
        has_command = "command" in found
        if has_command:
            if "url" in found:
                self.warning(
                    found["url"][1],
                    "ignored: this server also sets command, and command wins (remove one of them)",
                )
            if values.get("transport") not in (None, "stdio"):
                self.warning(found["transport"][1], "ignored: command makes this a stdio server")
            return Transport.STDIO
        if "url" in found:
            if values.get("transport") == "stdio":
                self.error(
                    found["transport"][1],
                    "stdio needs command, but this server only sets url: use http or sse",
                )
            return Transport.SSE if values.get("transport") == "sse" else Transport.HTTP
        if "command" not in found and "url" not in found:
            self.file.error(
                "sets neither command (a local stdio server) nor url (an HTTP server): add "
                "one of them; this server is skipped",
                line=self.server.line,
                server=self.server.name,
            )
            self.failed = True
        return None

    def _command(
        self, found: dict[str, tuple[Any, KeyPath]], values: dict[str, Any]
    ) -> tuple[str | None, tuple[str, ...]]:
        if "command" not in found:
            return None, ()
        raw, path = found["command"]
        args: tuple[str, ...] = values.get("args", ())
        if isinstance(raw, str):
            if not raw.strip():
                self.error(path, "must not be empty: name the program to start")
                return None, ()
            if self.dialect is D.TOML and len(raw.split()) > 1:
                import shlex

                try:
                    words = shlex.split(raw)
                except ValueError:
                    words = raw.split()
                array = "[" + ", ".join(json.dumps(w) for w in words) + "]"
                self.warning(
                    path,
                    f"runs one program named {raw!r} (spaces included); to pass "
                    f"arguments, write command = {array}",
                )
            return raw, args
        if isinstance(raw, list) and all(isinstance(x, str) for x in raw):
            if not raw or not raw[0].strip():
                self.error(
                    path,
                    "must not be empty: name the program to start, e.g. "
                    '["npx", "-y", "some-server"]',
                )
                return None, ()
            return raw[0], (*raw[1:], *args)
        if isinstance(raw, list):
            for index, item in enumerate(raw):
                if not isinstance(item, str):
                    what = "the program" if index == 0 else f"argument {index}"
                    self.error(
                        (*path, index),
                        f"must be a string ({what} of command), not "
                        f"{_describe(item, self.dialect)}",
                    )
            return None, ()
        want = (
            'an array of strings (program and arguments), e.g. ["npx", "-y", "pkg"]'
            if self.dialect is D.TOML
            else "a string (put arguments in args)"
        )
        self.error(path, f"must be {want}, not {_describe(raw, self.dialect)}")
        return None, ()

    def _client_cert(
        self, found: dict[str, tuple[Any, KeyPath]], values: dict[str, Any]
    ) -> ClientCert | None:
        if "client_cert" not in found:
            if "client_key" in values:
                self.error(
                    found["client_key"][1], "needs client_cert: add the certificate path too"
                )
            return None
        raw, path = found["client_cert"]
        key = values.get("client_key")
        if isinstance(raw, str) and raw.strip():
            return ClientCert(cert=raw, key=key)
        if (
            isinstance(raw, list)
            and len(raw) in (2, 3)
            and all(isinstance(x, str) and x for x in raw)
        ):
            if key is not None:
                self.error(
                    found["client_key"][1], "is also given inside client_cert: keep one of them"
                )
                return None
            password = raw[2] if len(raw) == 3 else None
            if password is not None and not self._references_ok((*path, 2), password):
                return None
            return ClientCert(cert=raw[0], key=raw[1], password=password)
        self.error(
            path,
            "must be a certificate path, [cert, key] or [cert, key, password], "
            f"not {_describe(raw, self.dialect)}",
        )
        return None

    def _tool_costs(
        self,
        found: dict[str, tuple[Any, KeyPath]],
    ) -> tuple[tuple[str, ToolCost], ...] | None:
        if "tool_costs" not in found:
            return None
        raw, path = found["tool_costs"]
        if not isinstance(raw, dict):
            self.error(
                path,
                f"must be {self.mapping_word} of tool names to costs, not "
                f"{_describe(raw, self.dialect)}",
            )
            return None
        costs: list[tuple[str, ToolCost]] = []
        for tool, entry in raw.items():
            sub = (*path, tool)
            note = None
            credits = entry
            if isinstance(entry, dict):
                extra = sorted(set(entry) - {"credits", "note"})
                if extra:
                    hint = suggestion(extra[0], ["credits", "note"])
                    self.error(
                        (*sub, extra[0]),
                        f"unknown key in a tool cost{hint} (allowed: credits, note)",
                    )
                    continue
                if "credits" not in entry:
                    self.error(sub, "needs credits (a number or [low, high])")
                    continue
                credits = entry["credits"]
                note = entry.get("note")
                if note is not None and not isinstance(note, str):
                    self.error(
                        (*sub, "note"), f"must be a string, not {_describe(note, self.dialect)}"
                    )
                    continue
                sub = (*sub, "credits")
            if _is_number(credits):
                low = high = float(credits)
            elif (
                isinstance(credits, list)
                and len(credits) == 2
                and all(_is_number(x) for x in credits)
            ):
                low, high = float(credits[0]), float(credits[1])
                if low > high:
                    self.error(
                        sub,
                        f"[{fmt(credits[0])}, {fmt(credits[1])}] is not a range: "
                        f"write [low, high] with low <= high",
                    )
                    continue
            else:
                self.error(
                    sub,
                    f"must be a number of credits, [low, high] or "
                    f"{{credits: ..., note: ...}}, not "
                    f"{_describe(credits, self.dialect)}",
                )
                continue
            if low < 0:
                self.error(sub, f"{fmt(low)} is below the minimum 0")
                continue
            costs.append((str(tool), ToolCost(low=low, high=high, note=note)))
        return tuple(costs)

    def _roots(
        self, found: dict[str, tuple[Any, KeyPath]], values: dict[str, Any]
    ) -> tuple[str, ...] | None:
        """A server's ``roots``: absolute folders (errors name the entry); a project
        server's are ignored, since it is offered its project folder."""
        if "roots" not in values:
            return None
        path = found["roots"][1]
        if self.file.scope is Scope.PROJECT:
            self.warning(
                path,
                "ignored: a project server is offered its project folder as its root;"
                " roots applies to global servers",
            )
            return None
        entries: tuple[str, ...] = values["roots"]
        for index, entry in enumerate(entries):
            error, warning = root_problem(entry)
            if error:
                self.error((*path, index), error)
            elif warning:
                self.warning((*path, index), warning)
        return entries

    def _sandbox(
        self, found: dict[str, tuple[Any, KeyPath]], values: dict[str, Any]
    ) -> SandboxSpec:
        """``sandbox``: each path must be a path, each host a host or host:port."""
        for name in ("sandbox.read", "sandbox.write"):
            for index, entry in enumerate(values.get(name, ())):
                problem = sandbox_path_problem(entry)
                if problem:
                    self.error((*found[name][1], index), problem)
        for index, entry in enumerate(values.get("sandbox.network.allow", ())):
            problem = sandbox_host_problem(entry)
            if problem:
                self.error((*found["sandbox.network.allow"][1], index), problem)
        return SandboxSpec(
            enabled=values.get("sandbox.enabled"),
            read=values.get("sandbox.read", ()),
            write=values.get("sandbox.write", ()),
            network_allow=values.get("sandbox.network.allow", ()),
            network_learn=values.get("sandbox.network.learn", False),
        )

    def _check_rules(self, found: dict[str, tuple[Any, KeyPath]], values: dict[str, Any]) -> None:
        url = values.get("url")
        url_ok = url is None or re.match(r"https?://[^/\s]+", url, re.IGNORECASE)
        if url is not None and not url_ok and "command" not in found:
            self.error(
                found["url"][1],
                f"must start with http:// or https:// and name a host, not {mask_url(url)!r}",
            )
        path = values.get("oauth.callback_path")
        if path is not None and not path.startswith("/"):
            self.error(found["oauth.callback_path"][1], f"must start with /, not {path!r}")
        uri = values.get("oauth.redirect_uri")
        if uri is not None and not re.match(r"https?://", uri, re.IGNORECASE):
            self.error(
                found["oauth.redirect_uri"][1],
                f"must start with http:// or https://, not {mask_url(uri)!r}",
            )
        flow = values.get("oauth.flow")
        missing = [key for key in machine_flow_needs(flow, values) if not values.get(key)]
        if missing:
            self.error(
                found["oauth.flow"][1],
                f"{flow} sign-in needs {', '.join(missing)} (secrets as ${{keyring:NAME}})",
            )

    def _warn_not_applicable(
        self, found: dict[str, tuple[Any, KeyPath]], transport: Transport
    ) -> None:
        stdio = transport is Transport.STDIO
        for name, (_raw, path) in found.items():
            spec = schema.key(name)
            if name in ("url", "transport") or spec.parent is not None:
                continue
            if stdio and spec.applies == "remote":
                self.warning(path, "only used by HTTP servers; ignored for this stdio server")
            elif not stdio and spec.applies == "stdio":
                self.warning(path, "only used by stdio servers; ignored for this HTTP server")

    def _identity(
        self, found: dict[str, tuple[Any, KeyPath]], transport: Transport | None
    ) -> IdentityHeader | None:
        if "identity_header" not in found or transport in (None, Transport.STDIO):
            return None
        path = found["identity_header"][1]
        values: dict[str, Any] = {}
        self.soft, self.soft_failed = True, False
        try:
            for name, (raw, sub) in found.items():
                if name.startswith("identity_header."):
                    checked = self.value(schema.key(name), raw, sub)
                    values[name.rpartition(".")[2]] = checked
        finally:
            self.soft = False
        if self.soft_failed:
            return None
        if "name" not in values:
            self.warning(path, "needs name (the header to send); identity_header is ignored")
            return None
        value_from = values.get("value_from", "static")
        if value_from == "static" and "value" not in values:
            self.warning(path, "needs value when value_from is static; identity_header is ignored")
            return None
        return IdentityHeader(name=values["name"], value_from=value_from, value=values.get("value"))

    def _oauth(
        self, found: dict[str, tuple[Any, KeyPath]], values: dict[str, Any]
    ) -> OAuthSpec | None:
        auth = values.get("auth")
        has_table = "oauth" in found
        if auth == "none":
            if has_table:
                self.warning(found["oauth"][1], "ignored: auth is none")
            return None
        if auth != "oauth" and not has_table:
            return None

        def get(name: str) -> Any:
            return values.get(f"oauth.{name}", schema.key(f"oauth.{name}").default)

        return OAuthSpec(
            client_id=values.get("oauth.client_id"),
            client_secret=values.get("oauth.client_secret"),
            client_name=values.get("oauth.client_name"),
            scope=values.get("oauth.scope"),
            callback_port=values.get("oauth.callback_port"),
            callback_path=values.get("oauth.callback_path"),
            callback_host=values.get("oauth.callback_host"),
            redirect_uri=values.get("oauth.redirect_uri"),
            flow=get("flow"),
            timeout=get("timeout"),
            token_endpoint_auth_method=values.get("oauth.token_endpoint_auth_method"),
            client_assertion_key=values.get("oauth.client_assertion_key"),
            issuer=values.get("oauth.issuer"),
            idp_token_endpoint=values.get("oauth.idp_token_endpoint"),
            idp_client_id=values.get("oauth.idp_client_id"),
            idp_client_secret=values.get("oauth.idp_client_secret"),
            id_token=values.get("oauth.id_token"),
            allow_private_endpoints=get("allow_private_endpoints"),
        )


_LABEL = r"[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?"
_HOST = re.compile(rf"(\*\.)?{_LABEL}(\.{_LABEL})*")
_IPV6 = re.compile(r"\[[0-9A-Fa-f:.]+\]")


def sandbox_path_problem(entry: str) -> str | None:
    """Why ``entry`` cannot be a sandbox path, or None."""
    if "\0" in entry or "\n" in entry:
        return f"{entry!r} is not a path"
    if entry.startswith("~") and not (entry == "~" or entry.startswith("~/")):
        return f"{entry!r}: only ~ and ~/path are expanded (not ~user)"
    return None


def sandbox_host_problem(entry: str) -> str | None:
    """Why ``entry`` is not ``host`` or ``host:port``, or None."""
    host, port = entry, None
    if "/" in entry or "@" in entry:
        ok = False
    elif entry.startswith("["):
        host, _, rest = entry.partition("]")
        host += "]"
        if rest:
            if not rest.startswith(":"):
                return f"{entry!r} is not host or host:port"
            port = rest[1:]
        ok = bool(_IPV6.fullmatch(host))
    else:
        if entry.count(":") == 1:
            host, port = entry.split(":")
        ok = bool(_HOST.fullmatch(host))
    if not ok:
        return (
            f"{entry!r} is not host or host:port (e.g. api.example.com, "
            "registry.npmjs.org:443, *.example.com; no scheme, no path)"
        )
    if port is not None and not (port.isdigit() and 1 <= int(port) <= 65535):
        return f"{entry!r}: the port must be a number from 1 to 65535"
    return None


def _join(path: KeyPath) -> str:
    return ".".join(str(p) for p in path)


def validate_servers(file: RawFile) -> list[ServerSpec]:
    """Every server of ``file`` that passed; diagnostics go into ``file.diagnostics``."""
    if file.blocked or not file.parsed:
        return []
    specs: list[ServerSpec] = []
    for server in file.servers:
        try:
            spec = _Checker(file, server).run()
        except Exception as exc:  # a bug here must cost one server, never the whole load
            file.error(
                f"could not be checked ({type(exc).__name__}: {exc}); this server is "
                "skipped: please report this",
                line=server.line,
                server=server.name,
            )
            continue
        if spec is not None:
            specs.append(spec)
    return specs


def validate_settings(file: RawFile) -> dict[str, tuple[Any, int]]:
    """``{RuntimeSettings field: (value, line)}`` for every valid top-level setting."""
    out: dict[str, tuple[Any, int]] = {}
    if not file.parsed:
        return out
    for raw in file.settings:
        spec = schema.setting(raw.name)
        value = raw.value
        key = ".".join(spec.yaml if file.dialect is D.YAML and spec.yaml else (spec.name,))
        problem: str | None = None
        if spec.type == "int":
            if isinstance(value, bool) or not isinstance(value, int):
                problem = f"must be a whole number, not {_describe(value, file.dialect)}"
            elif spec.min is not None and value < spec.min:
                problem = f"{value} is below the minimum {fmt(spec.min)}"
            elif spec.max is not None and value > spec.max:
                problem = f"{value} is above the maximum {fmt(spec.max)}"
        elif spec.type == "bool":
            if not isinstance(value, bool):
                problem = f"must be true or false, not {_describe(value, file.dialect)}"
        elif spec.type == "choice":
            if isinstance(value, bool):  # YAML 1.1 habits: on/off written as booleans
                value = "on" if value else "off"
            if not isinstance(value, str) or value.lower() not in spec.choices:
                allowed = one_of(spec.choices)
                problem = f"must be {allowed}, not {_describe(value, file.dialect)}"
            else:
                value = value.lower()
        elif spec.type == "string" and (not isinstance(value, str) or not value.strip()):
            problem = f"must be a non-empty string, not {_describe(value, file.dialect)}"
        elif spec.type == "string_list" and spec.name != "roots":
            if not isinstance(value, list) or not all(isinstance(x, str) and x for x in value):
                problem = f"must be a list of names, not {_describe(value, file.dialect)}"
            else:
                value = tuple(dict.fromkeys(x.strip() for x in value))
        elif spec.type == "string_list":
            if not isinstance(value, list) or not all(isinstance(x, str) and x for x in value):
                problem = f"must be a list of folder names, not {_describe(value, file.dialect)}"
            else:
                value = tuple(value)
                bad, problem = _root_list_problem(file, value, raw.line, key)
                key = key if bad is None else f"{key}.{bad}"
        elif spec.name == "oauth.client_metadata_url" and not _cimd_url_ok(str(value)):
            problem = (
                f"{value!r} is not an https URL with a path (a Client ID Metadata Document"
                " is served over https at a path such as /portico/client.json)"
            )
        if problem and spec.default in (None, ()):
            file.error(f"{problem}; it is not used", line=raw.line, key=key)
            continue
        if problem:
            file.error(f"{problem}; the default {spec.default!s} is used", line=raw.line, key=key)
            continue
        if spec.field:
            out[spec.field] = (value, raw.line)
    return out


def _root_list_problem(
    file: RawFile, entries: tuple[str, ...], line: int, key: str
) -> tuple[int | None, str | None]:
    """(index, error) of the first bad entry of a top-level ``roots`` list, else (None,
    None); warnings (a folder that does not exist yet) go to ``file``."""
    for index, entry in enumerate(entries):
        error, warning = root_problem(entry)
        if error:
            return index, error
        if warning:
            file.warning(warning, line=line, key=f"{key}.{index}")
    return None, None


def _cimd_url_ok(url: str) -> bool:
    from urllib.parse import urlsplit

    parts = urlsplit(url.strip())
    return parts.scheme == "https" and bool(parts.hostname) and parts.path not in ("", "/")


def settings_from(values: dict[str, Any]) -> RuntimeSettings:
    return RuntimeSettings(**values)
