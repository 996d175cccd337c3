"""The one table of every config key, in both dialects.

Validation, ``portico config example``, unknown-key suggestions and the GUI editor's form
all read this table; nothing else lists keys.

Units: the model stores every duration in seconds. In YAML durations are written in
seconds. In TOML they are written in milliseconds (``timeout = 30000``), except keys whose
name already says ``_seconds`` (``idle_timeout_seconds``), which are seconds in both.
``min`` / ``max`` / ``default`` below are in model units (seconds); use
:meth:`KeySpec.to_dialect` / :meth:`KeySpec.from_dialect` and :meth:`KeySpec.unit` to show
or read them in a dialect's unit.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from portico.config.model import (
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_COST_UNIT,
    DEFAULT_DEFER_TOOLS,
    DEFAULT_DISCOVERY_CONCURRENCY,
    DEFAULT_OAUTH_CALLBACK_PATH,
    DEFAULT_TOOL_TIMEOUT,
    Dialect,
)

# The groups of the GUI editor's form, in display order.
GROUPS: tuple[str, ...] = (
    "Connection",
    "Authentication",
    "Tools and filtering",
    "Costs and spend",
    "Trust and approvals",
    "Sampling",
    "Elicitation",
    "Lifecycle",
    "Advanced",
)

KeyType = Literal[
    "bool",  # true / false
    "int",  # whole number
    "number",  # int or float
    "duration",  # seconds in the model; TOML writes ms unless the name ends in _seconds
    "string",
    "choice",  # one of ``choices``
    "string_list",  # list of strings
    "command",  # TOML: string array (program + args); YAML: string (args go in ``args``)
    "mapping",  # string -> string (env, headers)
    "table",  # a nested table whose children are the keys named ``<this>.<child>``
    "client_cert",  # a path, [cert, key] or [cert, key, password]
    "tool_costs",  # tool -> number | {credits: N | [lo, hi], note: "..."}
]

Applies = Literal["any", "stdio", "remote"]

# Supported ``version`` of mcp.toml. A newer one stops every server of that file.
SUPPORTED_VERSION = 1

MS_PER_SECOND = 1000


@dataclass(frozen=True)
class KeySpec:
    """One key of a server entry.

    ``name`` is the logical dotted path (``oauth.callback_port``); ``toml`` / ``yaml`` hold
    the leaf spellings accepted in each dialect, the first being the one to write. Either
    dialect also accepts the other's spellings (``environment`` / ``env``).
    """

    name: str
    toml: tuple[str, ...]
    yaml: tuple[str, ...]
    type: KeyType
    group: str
    help: str
    default: Any = None  # model units; None = unset
    min: float | None = None  # model units
    max: float | None = None
    choices: tuple[str, ...] = ()
    applies: Applies = "any"
    secret: bool = False  # values may hold secrets: mask them, allow ${...} references
    example: Any = None  # what `config example` shows when there is no default (model units)

    @property
    def parent(self) -> str | None:
        head, _, _ = self.name.rpartition(".")
        return head or None

    @property
    def leaf(self) -> str:
        return self.name.rpartition(".")[2]

    def spellings(self, dialect: Dialect) -> tuple[str, ...]:
        """Accepted spellings in ``dialect``: its own first, then the other dialect's."""
        own, other = (self.toml, self.yaml) if dialect is Dialect.TOML else (self.yaml, self.toml)
        return own + tuple(s for s in other if s not in own)

    def spelling(self, dialect: Dialect) -> str:
        """The spelling to write in ``dialect``."""
        return (self.toml if dialect is Dialect.TOML else self.yaml)[0]

    def path(self, dialect: Dialect) -> tuple[str, ...]:
        """The full written key path inside a server entry, e.g. ("oauth", "callback_port")."""
        parent = key(self.parent).path(dialect) if self.parent else ()
        return (*parent, self.spelling(dialect))

    def in_ms(self, dialect: Dialect) -> bool:
        return (
            self.type == "duration"
            and dialect is Dialect.TOML
            and not self.leaf.endswith("_seconds")
        )

    def unit(self, dialect: Dialect) -> str | None:
        if self.type == "duration":
            return "milliseconds" if self.in_ms(dialect) else "seconds"
        return None

    def to_dialect(self, value: Any, dialect: Dialect) -> Any:
        """A model value (seconds) as written in ``dialect`` (ms for TOML durations)."""
        if value is None or not self.in_ms(dialect):
            return value
        return _whole(value * MS_PER_SECOND)

    def from_dialect(self, value: Any, dialect: Dialect) -> Any:
        """A written value as the model stores it (seconds)."""
        if value is None or not self.in_ms(dialect) or isinstance(value, bool):
            return value
        return value / MS_PER_SECOND


@dataclass(frozen=True)
class SettingSpec:
    """A top-level (not per-server) setting.

    ``toml`` / ``yaml`` are full key paths from the top of the file, or None when that
    dialect does not carry the setting. ``field`` is the RuntimeSettings attribute.
    ``example`` is what ``config example`` shows for a setting that has no default.
    """

    name: str
    field: str
    toml: tuple[str, ...] | None
    yaml: tuple[str, ...] | None
    type: KeyType
    default: Any
    help: str
    min: float | None = None
    max: float | None = None
    choices: tuple[str, ...] = ()
    example: Any = None


def _whole(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value


def fmt(value: Any) -> str:
    """A number as a person writes it: 300000, not 300000.0."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


C, A, T, S, TR, SA, EL, L, AD = GROUPS

KEYS: tuple[KeySpec, ...] = (
    # --- Connection -------------------------------------------------------------------
    KeySpec(
        "command",
        ("command",),
        ("command",),
        "command",
        C,
        "Stdio servers: the program to start (in TOML an array: program, then arguments).",
        applies="stdio",
        example=("npx", "-y", "@modelcontextprotocol/server-everything"),
    ),
    KeySpec(
        "args",
        ("args",),
        ("args",),
        "string_list",
        C,
        "Stdio servers: arguments after the program.",
        default=(),
        applies="stdio",
    ),
    KeySpec(
        "env",
        ("environment", "env"),
        ("env", "environment"),
        "mapping",
        C,
        "Stdio servers: environment variables for the process; values may be "
        "${env:VAR} or ${keyring:NAME} references.",
        default={},
        applies="stdio",
        secret=True,
        example={"API_KEY": "${env:API_KEY}"},
    ),
    KeySpec(
        "cwd",
        ("cwd",),
        ("cwd",),
        "string",
        C,
        "Stdio cwd. Unset: project folder for project servers, home folder for global ones; "
        "relative: from the project or config file's folder.",
        applies="stdio",
        example=".",
    ),
    KeySpec(
        "roots",
        ("roots",),
        ("roots",),
        "string_list",
        C,
        "Global servers: folders offered as roots (absolute or ~); unset: the top-level"
        " roots. Project servers get their project folder.",
        example=("~",),
    ),
    KeySpec(
        "url",
        ("url",),
        ("url",),
        "string",
        C,
        "HTTP servers: the endpoint; must start with http:// or https://.",
        applies="remote",
        example="https://mcp.example.com/mcp",
    ),
    KeySpec(
        "transport",
        ("transport",),
        ("transport",),
        "choice",
        C,
        "HTTP servers: http (Streamable HTTP) or sse (the legacy HTTP+SSE transport).",
        default="http",
        choices=("http", "sse"),
        applies="remote",
    ),
    KeySpec(
        "headers",
        ("headers",),
        ("headers",),
        "mapping",
        C,
        "HTTP servers: headers sent with every request; values may be ${...} references.",
        default={},
        applies="remote",
        secret=True,
        example={"X-Team": "platform", "Authorization": "Bearer ${keyring:example-token}"},
    ),
    KeySpec(
        "timeout",
        ("timeout",),
        ("timeout",),
        "duration",
        C,
        "How long to wait for each response (tool calls) from the server.",
        default=DEFAULT_TOOL_TIMEOUT,
        min=0.001,
        max=300.0,
    ),
    KeySpec(
        "connect_timeout",
        ("connect_timeout",),
        ("connect_timeout",),
        "duration",
        C,
        "How long to wait for the server to start and finish the MCP handshake.",
        default=DEFAULT_CONNECT_TIMEOUT,
        min=0.001,
        max=3600.0,
    ),
    # --- Authentication ---------------------------------------------------------------
    KeySpec(
        "auth",
        ("auth",),
        ("auth",),
        "choice",
        A,
        "HTTP servers: oauth signs in with OAuth 2.1 (an oauth table turns it on too).",
        choices=("oauth", "none"),
        applies="remote",
        example="oauth",
    ),
    KeySpec(
        "oauth",
        ("oauth",),
        ("oauth",),
        "table",
        A,
        "HTTP servers: OAuth client settings, for servers without dynamic registration.",
        applies="remote",
    ),
    KeySpec(
        "oauth.client_id",
        ("client_id",),
        ("client_id",),
        "string",
        A,
        "The client ID of the app you registered with the server.",
        applies="remote",
        example="my-client-id",
    ),
    KeySpec(
        "oauth.client_secret",
        ("client_secret",),
        ("client_secret",),
        "string",
        A,
        "The client secret of a confidential client; best as ${keyring:NAME}.",
        applies="remote",
        secret=True,
        example="${keyring:example-client-secret}",
    ),
    KeySpec(
        "oauth.client_name",
        ("client_name",),
        ("client_name",),
        "string",
        A,
        "The client name sent with dynamic client registration.",
        applies="remote",
        example="Portico",
    ),
    KeySpec(
        "oauth.scope",
        ("scope",),
        ("scope",),
        "string",
        A,
        "Scopes to request, separated by spaces (default: what the server advertises).",
        applies="remote",
        example="read write",
    ),
    KeySpec(
        "oauth.callback_port",
        ("callback_port", "redirect_port"),
        ("redirect_port", "callback_port"),
        "int",
        A,
        "Fixed loopback port of the redirect URI (default: any free port).",
        min=1,
        max=65535,
        applies="remote",
        example=33418,
    ),
    KeySpec(
        "oauth.callback_path",
        ("callback_path",),
        ("callback_path",),
        "string",
        A,
        "Path of the redirect URI; must start with /.",
        default=DEFAULT_OAUTH_CALLBACK_PATH,
        applies="remote",
    ),
    KeySpec(
        "oauth.callback_host",
        ("callback_hostname", "redirect_host", "callback_host"),
        ("redirect_host", "callback_hostname", "callback_host"),
        "string",
        A,
        "Host name in the redirect URI (e.g. localhost); the listener binds 127.0.0.1.",
        default="127.0.0.1",
        applies="remote",
    ),
    KeySpec(
        "oauth.redirect_uri",
        ("redirect_uri",),
        ("redirect_uri",),
        "string",
        A,
        "A public redirect URI that forwards to the loopback listener (a proxy or tunnel).",
        applies="remote",
        example="https://oauth.example.net/callback",
    ),
    KeySpec(
        "oauth.flow",
        ("flow",),
        ("flow",),
        "choice",
        A,
        "browser (loopback redirect), device (device code), or client_credentials / "
        "cross_app (machine-to-machine: nobody signs in).",
        default="browser",
        choices=("browser", "device", "client_credentials", "cross_app"),
        applies="remote",
    ),
    KeySpec(
        "oauth.timeout",
        ("timeout",),
        ("timeout",),
        "duration",
        A,
        "How long the person has to finish signing in.",
        default=300.0,
        min=1.0,
        max=86400.0,
        applies="remote",
    ),
    KeySpec(
        "oauth.token_endpoint_auth_method",
        ("token_endpoint_auth_method",),
        ("token_endpoint_auth_method",),
        "choice",
        A,
        "How the client authenticates at the token endpoint (default: client_secret_basic "
        "with a secret, private_key_jwt with client_assertion_key).",
        choices=("client_secret_basic", "client_secret_post", "private_key_jwt"),
        applies="remote",
        example="client_secret_basic",
    ),
    KeySpec(
        "oauth.client_assertion_key",
        ("client_assertion_key",),
        ("client_assertion_key",),
        "string",
        A,
        "private_key_jwt: a PEM private key file that signs the client assertion.",
        applies="remote",
        example="~/.config/portico/client-key.pem",
    ),
    KeySpec(
        "oauth.issuer",
        ("issuer",),
        ("issuer",),
        "string",
        A,
        "client_credentials / cross_app: the authorization server that issued the client; "
        "credentials go only there.",
        applies="remote",
        example="https://auth.example.com",
    ),
    KeySpec(
        "oauth.allow_private_endpoints",
        ("allow_private_endpoints",),
        ("allow_private_endpoints",),
        "bool",
        A,
        "Local development: allow OAuth endpoints on private addresses and plain http "
        "(project servers are reviewed).",
        default=False,
        applies="remote",
    ),
    KeySpec(
        "oauth.idp_token_endpoint",
        ("idp_token_endpoint",),
        ("idp_token_endpoint",),
        "string",
        A,
        "cross_app: the enterprise identity provider's token endpoint (token exchange).",
        applies="remote",
        example="https://idp.example.com/oauth2/token",
    ),
    KeySpec(
        "oauth.idp_client_id",
        ("idp_client_id",),
        ("idp_client_id",),
        "string",
        A,
        "cross_app: Portico's client ID at the identity provider.",
        applies="remote",
        example="portico-desktop",
    ),
    KeySpec(
        "oauth.idp_client_secret",
        ("idp_client_secret",),
        ("idp_client_secret",),
        "string",
        A,
        "cross_app: the client secret at the identity provider; best as ${keyring:NAME}.",
        applies="remote",
        secret=True,
        example="${keyring:idp-client-secret}",
    ),
    KeySpec(
        "oauth.id_token",
        ("id_token",),
        ("id_token",),
        "string",
        A,
        "cross_app: the identity provider's ID token to exchange; a ${env:NAME} or "
        "${keyring:NAME} reference.",
        applies="remote",
        secret=True,
        example="${env:IDP_ID_TOKEN}",
    ),
    KeySpec(
        "client_cert",
        ("client_cert",),
        ("client_cert",),
        "client_cert",
        A,
        "mTLS: a PEM path, [cert, key] or [cert, key, password].",
        applies="remote",
        example="~/.certs/mcp-client.pem",
    ),
    KeySpec(
        "client_key",
        ("client_key",),
        ("client_key",),
        "string",
        A,
        "mTLS: the private-key PEM path, when separate from client_cert.",
        applies="remote",
        example="~/.certs/mcp-client.key",
    ),
    KeySpec(
        "ca_cert",
        ("ca_cert",),
        ("ca_cert",),
        "string",
        A,
        "TLS: a PEM file of extra CA certificates to trust for this server (a private CA);"
        " its icons use the same trust.",
        applies="remote",
        example="~/.certs/company-ca.pem",
    ),
    KeySpec(
        "identity_header",
        ("identity_header",),
        ("identity_header",),
        "table",
        A,
        "HTTP servers: a per-user identity header sent with every request.",
        applies="remote",
    ),
    KeySpec(
        "identity_header.name",
        ("name",),
        ("name",),
        "string",
        A,
        "The header name, e.g. X-User-Id.",
        applies="remote",
        example="X-User-Id",
    ),
    KeySpec(
        "identity_header.value_from",
        ("value_from",),
        ("value_from",),
        "choice",
        A,
        "static sends value; profile sends the active profile name.",
        default="static",
        choices=("static", "profile"),
        applies="remote",
    ),
    KeySpec(
        "identity_header.value",
        ("value",),
        ("value",),
        "string",
        A,
        "The header value (required when value_from is static).",
        applies="remote",
        example="alice",
    ),
    # --- Tools and filtering ------------------------------------------------------------
    KeySpec(
        "tools",
        ("tools",),
        ("tools",),
        "table",
        T,
        "Which tools and utilities of the server the model sees.",
    ),
    KeySpec(
        "tools.include",
        ("include",),
        ("include",),
        "string_list",
        T,
        "Only these tools (exact names or fnmatch globs); wins over exclude.",
        default=(),
    ),
    KeySpec(
        "tools.exclude",
        ("exclude",),
        ("exclude",),
        "string_list",
        T,
        "Every tool except these (exact names or fnmatch globs).",
        default=(),
    ),
    KeySpec(
        "tools.resources",
        ("resources",),
        ("resources",),
        "bool",
        T,
        "Offer list_resources / read_resource when the server has resources.",
        default=True,
    ),
    KeySpec(
        "tools.prompts",
        ("prompts",),
        ("prompts",),
        "bool",
        T,
        "Offer list_prompts / get_prompt when the server has prompts.",
        default=True,
    ),
    KeySpec(
        "always_load",
        ("always_load",),
        ("always_load",),
        "bool",
        T,
        "Load every tool up front instead of deferring them behind tool_search.",
        default=False,
    ),
    # --- Costs and spend ----------------------------------------------------------------
    KeySpec(
        "tool_costs",
        ("tool_costs",),
        ("tool_costs",),
        "tool_costs",
        S,
        'Per tool: credits per call, or {credits = N or [lo, hi], note = "..."}.',
        default={},
        example={"create_image": 20, "animate": {"credits": [5, 20], "note": "per animation"}},
    ),
    KeySpec(
        "spend_limit",
        ("spend_limit",),
        ("spend_limit",),
        "number",
        S,
        "Budget per chat in cost units; 0 = no limit.",
        default=0,
        min=0,
    ),
    KeySpec(
        "cost_unit",
        ("cost_unit",),
        ("cost_unit",),
        "string",
        S,
        "The unit named in cost prompts.",
        default=DEFAULT_COST_UNIT,
    ),
    # --- Trust and approvals --------------------------------------------------------------
    KeySpec(
        "trust",
        ("trust",),
        ("trust",),
        "choice",
        TR,
        "full never asks; untrusted asks for every write-capable call; "
        "default asks for tools without readOnlyHint.",
        default="default",
        choices=("default", "full", "untrusted"),
    ),
    KeySpec(
        "from_link",
        ("from_link",),
        ("from_link",),
        "bool",
        TR,
        "Set by Portico on a server added from a portico:// link: it waits for a trust "
        "review before it first connects, like a project server.",
        default=False,
    ),
    # --- Sampling -----------------------------------------------------------------------
    KeySpec(
        "sampling",
        ("sampling",),
        ("sampling",),
        "table",
        SA,
        "Requests from the server to run the model (sampling/createMessage).",
    ),
    KeySpec(
        "sampling.enabled",
        ("enabled",),
        ("enabled",),
        "bool",
        SA,
        "Allow the server to ask for model completions.",
        default=True,
    ),
    KeySpec(
        "sampling.model",
        ("model",),
        ("model",),
        "string",
        SA,
        "Model used for this server's requests (default: the chat model).",
        example="gpt-4o-mini",
    ),
    KeySpec(
        "sampling.max_tokens_cap",
        ("max_tokens_cap",),
        ("max_tokens_cap",),
        "int",
        SA,
        "Most tokens one sampling response may use.",
        default=4096,
        min=1,
        max=1_000_000,
    ),
    KeySpec(
        "sampling.timeout",
        ("timeout",),
        ("timeout",),
        "duration",
        SA,
        "How long one sampling request may take.",
        default=30.0,
        min=0.001,
        max=3600.0,
    ),
    KeySpec(
        "sampling.max_rpm",
        ("max_rpm",),
        ("max_rpm",),
        "int",
        SA,
        "Most sampling requests per minute.",
        default=10,
        min=1,
        max=10_000,
    ),
    KeySpec(
        "sampling.max_tool_rounds",
        ("max_tool_rounds",),
        ("max_tool_rounds",),
        "int",
        SA,
        "Most tool-use rounds in one sampling loop.",
        default=5,
        min=0,
        max=100,
    ),
    KeySpec(
        "sampling.allowed_models",
        ("allowed_models",),
        ("allowed_models",),
        "string_list",
        SA,
        "Models the server may ask for (empty = any).",
        default=(),
    ),
    KeySpec(
        "sampling.log_level",
        ("log_level",),
        ("log_level",),
        "choice",
        SA,
        "Audit log level of sampling requests.",
        default="info",
        choices=("debug", "info", "warning"),
    ),
    # --- Elicitation --------------------------------------------------------------------
    KeySpec(
        "elicitation",
        ("elicitation",),
        ("elicitation",),
        "table",
        EL,
        "Questions from the server to the person (elicitation/create).",
    ),
    KeySpec(
        "elicitation.enabled",
        ("enabled",),
        ("enabled",),
        "bool",
        EL,
        "Allow the server to ask the person for input.",
        default=True,
    ),
    KeySpec(
        "elicitation.timeout",
        ("timeout",),
        ("timeout",),
        "duration",
        EL,
        "How long to wait for the person's answer.",
        default=300.0,
        min=1.0,
        max=86400.0,
    ),
    KeySpec(
        "elicitation.allow_url",
        ("allow_url",),
        ("allow_url",),
        "bool",
        EL,
        "Show URL-mode requests (the URL is shown, never opened by itself).",
        default=False,
    ),
    KeySpec(
        "sandbox",
        ("sandbox",),
        ("sandbox",),
        "table",
        TR,
        "Stdio servers (Linux): a sandbox that sees the system read-only, its install, "
        "its project or roots, a private /tmp, an empty home.",
        applies="stdio",
    ),
    KeySpec(
        "sandbox.enabled",
        ("enabled",),
        ("enabled",),
        "bool",
        TR,
        "Run this server in the sandbox (unset: on for project servers, for global ones "
        "when the top-level sandbox.enabled is on).",
        applies="stdio",
        example=True,
    ),
    KeySpec(
        "sandbox.read",
        ("read",),
        ("read",),
        "string_list",
        TR,
        "More paths it may read (absolute, ~, or relative to the project or config file's folder).",
        default=(),
        applies="stdio",
        example=("~/.gitconfig",),
    ),
    KeySpec(
        "sandbox.write",
        ("write",),
        ("write",),
        "string_list",
        TR,
        "Paths it may write (its project is read-only inside unless listed here).",
        default=(),
        applies="stdio",
        example=("./out",),
    ),
    KeySpec(
        "sandbox.network",
        ("network",),
        ("network",),
        "table",
        TR,
        "What it may reach on the network (nothing unless allow lists hosts).",
        applies="stdio",
    ),
    KeySpec(
        "sandbox.network.allow",
        ("allow",),
        ("allow",),
        "string_list",
        TR,
        "Hosts it may reach, as host or host:port (*.example.com for subdomains).",
        default=(),
        applies="stdio",
        example=("api.example.com", "registry.npmjs.org:443"),
    ),
    KeySpec(
        "sandbox.network.learn",
        ("learn",),
        ("learn",),
        "bool",
        TR,
        "Learn mode: let every host through and report each one not in allow (Log, "
        "Activity). Yours only: a project cannot turn it on.",
        default=False,
        applies="stdio",
    ),
    # --- Lifecycle ----------------------------------------------------------------------
    KeySpec(
        "enabled",
        ("enabled",),
        ("enabled",),
        "bool",
        L,
        "Start the server; false keeps it configured but off.",
        default=True,
    ),
    KeySpec(
        "lazy",
        ("lazy",),
        ("lazy",),
        "bool",
        L,
        "Register tools from the schema cache; start the server on the first call.",
        default=False,
    ),
    KeySpec(
        "idle_timeout_seconds",
        ("idle_timeout_seconds",),
        ("idle_timeout_seconds",),
        "duration",
        L,
        "Recycle a stdio server after this long without a tool call (0 = never).",
        default=0.0,
        min=0.0,
        max=31_536_000.0,
        applies="stdio",
    ),
    KeySpec(
        "max_lifetime_seconds",
        ("max_lifetime_seconds",),
        ("max_lifetime_seconds",),
        "duration",
        L,
        "Recycle a stdio server after this total age (0 = never).",
        default=0.0,
        min=0.0,
        max=31_536_000.0,
        applies="stdio",
    ),
    # --- Advanced -----------------------------------------------------------------------
    KeySpec(
        "protocol",
        ("protocol",),
        ("protocol",),
        "choice",
        AD,
        "auto tries the newest MCP protocol first; legacy speaks 2025-11-25 only.",
        default="auto",
        choices=("auto", "legacy"),
    ),
    KeySpec(
        "supports_parallel_tool_calls",
        ("supports_parallel_tool_calls",),
        ("supports_parallel_tool_calls",),
        "bool",
        AD,
        "Tools of this server may run at the same time.",
        default=False,
    ),
    KeySpec(
        "events",
        ("events",),
        ("events",),
        "bool",
        AD,
        "Register the experimental MCP events tools for this server.",
        default=False,
    ),
)

SETTINGS: tuple[SettingSpec, ...] = (
    SettingSpec(
        "version",
        "",
        ("version",),
        None,
        "int",
        SUPPORTED_VERSION,
        "Format version of this file; a newer one than Portico reads starts no server.",
        min=1,
    ),
    SettingSpec(
        "defer_tools",
        "defer_tools",
        ("defer_tools",),
        ("mcp", "defer_tools"),
        "int",
        DEFAULT_DEFER_TOOLS,
        "Defer tools behind tool_search when the servers offer more than this many (0 = always).",
        min=0,
    ),
    SettingSpec(
        "discovery_concurrency",
        "discovery_concurrency",
        ("discovery_concurrency",),
        ("mcp", "discovery_concurrency"),
        "int",
        DEFAULT_DISCOVERY_CONCURRENCY,
        "Most servers connecting at the same time (0 = unlimited).",
        min=0,
    ),
    SettingSpec(
        "secrets.file_fallback",
        "file_fallback_for_secrets",
        None,
        ("secrets", "file_fallback"),
        "bool",
        False,
        "Without a secure keyring, keep secrets in a 0600 file instead of memory only.",
    ),
    SettingSpec(
        "approvals.mode",
        "approvals_mode",
        None,
        ("approvals", "mode"),
        "choice",
        "on",
        "off skips approval prompts of untrusted servers (never the spend limit).",
        choices=("on", "off"),
    ),
    SettingSpec(
        "profile",
        "profile",
        None,
        ("profile",),
        "string",
        "default",
        "The active profile name (sent by identity_header value_from: profile).",
    ),
    SettingSpec(
        "oauth.client_metadata_url",
        "oauth_client_metadata_url",
        ("oauth", "client_metadata_url"),
        ("oauth", "client_metadata_url"),
        "string",
        None,
        "https URL of Portico's Client ID Metadata Document (docs/oauth-client-metadata.md),"
        " used as the client id where the authorization server supports it.",
        example="https://example.com/portico/client.json",
    ),
    SettingSpec(
        "sandbox.enabled",
        "sandbox_all",
        ("sandbox", "enabled"),
        ("sandbox", "enabled"),
        "bool",
        False,
        "Run every stdio server in the sandbox, global ones too (project servers are"
        " sandboxed unless they say otherwise).",
    ),
    SettingSpec(
        "chat.model_titles",
        "chat_model_titles",
        None,
        ("chat", "model_titles"),
        "bool",
        False,
        "The model writes each new chat's title (one more request per chat); off: the"
        " first words of the first message.",
    ),
    SettingSpec(
        "chat.model",
        "chat_model",
        ("chat_model",),
        ("chat", "model"),
        "string",
        None,
        "The model a new chat uses (PROVIDER/MODEL). In a project file it counts only for a"
        " provider you allowed for projects (projects: true on the provider).",
        example="local/qwen3",
    ),
    SettingSpec(
        "chat.servers",
        "chat_servers",
        ("chat_servers",),
        ("chat", "servers"),
        "string_list",
        (),
        "Servers whose tools a new chat offers the model (empty: all). A project may narrow"
        " yours, never widen them.",
        example=("github", "filesystem"),
    ),
    SettingSpec(
        "chat.tools",
        "chat_tools",
        ("chat_tools",),
        ("chat", "tools"),
        "string_list",
        (),
        "Tools a new chat offers the model, as server__tool names or patterns (github__*);"
        " empty: all. A project may narrow yours, never widen them.",
        example=("github__search_*", "filesystem__read_file"),
    ),
    SettingSpec(
        "chat.live_views",
        "chat_live_views",
        None,
        ("chat", "live_views"),
        "int",
        3,
        "MCP Apps views loaded at once in a chat (each ~70 MiB). One scrolled out of sight"
        " is paused; past this many, the one seen least recently is unloaded to a"
        " placeholder and opens again, with its tool's input and result, when scrolled back.",
        min=1,
        max=20,
    ),
    SettingSpec(
        "endpoint.enabled",
        "endpoint_enabled",
        None,
        ("endpoint", "enabled"),
        "bool",
        False,
        "The app serves your servers to other MCP clients and the CLI on 127.0.0.1"
        " (each client with its own token; `portico serve` does it without the app).",
    ),
    SettingSpec(
        "endpoint.port",
        "endpoint_port",
        None,
        ("endpoint", "port"),
        "int",
        0,
        "The local endpoint's port on 127.0.0.1 (0 = any free port; the discovery file names it).",
        min=0,
        max=65535,
    ),
    SettingSpec(
        "roots",
        "default_roots",
        ("roots",),
        ("mcp", "roots"),
        "string_list",
        (),
        "Folders offered as roots to global servers that set no roots of their own"
        " (absolute or ~).",
        example=("~",),
    ),
)

# Top-level YAML keys this part reads; every other top-level key belongs to someone else.
YAML_SERVERS_KEY = "mcp_servers"
YAML_OWNED_TOP = ("mcp", "secrets", "approvals", "profile", "oauth", "sandbox", "endpoint")
TOML_SERVERS_KEY = "mcp"

_BY_NAME = {spec.name: spec for spec in KEYS}
_SETTINGS_BY_NAME = {spec.name: spec for spec in SETTINGS}


def key(name: str) -> KeySpec:
    """The key named ``name`` (logical dotted name); KeyError if there is none."""
    return _BY_NAME[name]


def setting(name: str) -> SettingSpec:
    return _SETTINGS_BY_NAME[name]


def children(parent: str | None) -> tuple[KeySpec, ...]:
    """Keys directly under ``parent`` (None = the server entry itself)."""
    return tuple(spec for spec in KEYS if spec.parent == parent)


def lookup(dialect: Dialect, parent: str | None, spelling: str) -> KeySpec | None:
    """The key spelled ``spelling`` under ``parent``, in ``dialect`` (other dialect too)."""
    for spec in children(parent):
        if spelling in spec.spellings(dialect):
            return spec
    return None


def spellings(dialect: Dialect, parent: str | None) -> list[str]:
    """Every spelling accepted under ``parent``, the dialect's own first."""
    own: list[str] = []
    other: list[str] = []
    for spec in children(parent):
        own.extend(s for s in spec.spellings(dialect)[:1] if s not in own)
    for spec in children(parent):
        other.extend(s for s in spec.spellings(dialect)[1:] if s not in own and s not in other)
    return own + other


def by_group() -> Iterator[tuple[str, tuple[KeySpec, ...]]]:
    """(group, keys) in display order, for the editor's form."""
    for group in GROUPS:
        yield group, tuple(spec for spec in KEYS if spec.group == group)


def resolve_key(
    dialect: Dialect, present: Any, parent: str | None, part: str
) -> tuple[str, str | None]:
    """The key to use for ``part`` under ``parent`` in a table/mapping holding ``present``.

    An existing spelling of the same key wins (``env`` where the entry already says
    ``environment``), else a schema key is written in ``dialect``'s spelling, else ``part``
    as given. Returns (key, logical name of that key or None when the schema has none).
    """
    spec = lookup(dialect, parent, part)
    if spec is None:
        return part, None
    if part in present:
        return part, spec.name
    for written in spec.spellings(dialect):
        if written in present:
            return written, spec.name
    return spec.spelling(dialect), spec.name


def spelled(dialect: Dialect, parent: str | None, parts: Sequence[str]) -> list[str]:
    """New nested keys in ``dialect``'s spelling (``redirect_port`` -> ``callback_port``)."""
    out: list[str] = []
    for part in parts:
        spec = lookup(dialect, parent, part)
        out.append(spec.spelling(dialect) if spec else part)
        parent = spec.name if spec else None
    return out


@dataclass(frozen=True)
class KeyAt:
    """What the schema says about a written key path inside a server entry."""

    spec: KeySpec | None  # the key itself, or the mapping / tool_costs it is an entry of
    entry: bool  # True: an entry of ``spec`` (env.NAME, headers.NAME, tool_costs.NAME)


def key_at(dialect: Dialect, path: Sequence[str]) -> KeyAt:
    """The schema key a written path (``("env", "TOKEN")``, ``("oauth", "client_id")``)
    names; ``KeyAt(None, False)`` for keys the schema does not know."""
    parent: str | None = None
    spec: KeySpec | None = None
    for depth, part in enumerate(path):
        if spec is not None and spec.type == "tool_costs":
            return KeyAt(spec, True)  # tool -> cost, or tool -> {credits, note}
        if spec is not None and spec.type == "mapping":
            return KeyAt(spec, True) if depth == len(path) - 1 else KeyAt(None, False)
        if spec is not None and spec.type != "table":
            return KeyAt(None, False)
        spec = lookup(dialect, parent, part)
        if spec is None:
            return KeyAt(None, False)
        parent = spec.name
    return KeyAt(spec, False)


class ValueTypeError(ValueError):
    """Text typed for a key that cannot be a value of that key's type."""


_INT = re.compile(r"^[+-]?\d+$")
_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


def typed_text(spec: KeySpec, dialect: Dialect, text: str) -> Any:
    """``text`` as a value of ``spec`` written in ``dialect``, or ValueTypeError.

    Strings are taken exactly as typed (the writer quotes them when the plain form would
    read as anything else). Numbers, durations (in the dialect's unit) and booleans must
    look like one. Lists, tables and the other structured keys return None: the caller
    reads those as an inline value of the dialect.
    """
    kind = spec.type
    if kind in ("string", "choice"):
        return text
    if kind == "command" and dialect is Dialect.YAML:
        return text
    if kind == "bool":
        lowered = text.strip().lower()
        if lowered in ("true", "false"):
            return lowered == "true"
        raise ValueTypeError(f"must be true or false, not {text!r}")
    if kind in ("int", "number", "duration"):
        stripped = text.strip().replace("_", "") if dialect is Dialect.TOML else text.strip()
        whole = kind == "int" or spec.in_ms(dialect)
        unit = spec.unit(dialect)
        what = "a whole number" if whole else "a number"
        if unit:
            what += f" of {unit}"
        if _INT.match(stripped):
            return int(stripped)
        if not whole and _NUMBER.match(stripped):
            return float(stripped)
        raise ValueTypeError(f"must be {what}, not {text!r}")
    return None
