"""The one typed model both config dialects map onto.

Everything here is frozen. Times are stored in seconds (float) whatever the dialect wrote
(TOML writes milliseconds for ``timeout``, YAML writes seconds). Secret-bearing strings
(env values, header values, ``client_secret``, the cert password) are kept exactly as
written: a ``${env:VAR}`` / ``${keyring:NAME}`` reference stays a reference until connect
time (see ``portico.config.secrets``).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal


class Scope(StrEnum):
    GLOBAL = "global"
    PROJECT = "project"


class Dialect(StrEnum):
    TOML = "toml"
    YAML = "yaml"


class Transport(StrEnum):
    STDIO = "stdio"
    HTTP = "http"  # Streamable HTTP
    SSE = "sse"  # the legacy HTTP+SSE transport


class Protocol(StrEnum):
    AUTO = "auto"
    LEGACY = "legacy"


class TrustLevel(StrEnum):
    DEFAULT = "default"  # ask for tools without readOnlyHint
    FULL = "full"
    UNTRUSTED = "untrusted"


Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class Source:
    """Where a server (or a key of it) was defined."""

    path: Path
    line: int  # 1-based
    scope: Scope
    dialect: Dialect

    def __str__(self) -> str:
        return f"{self.path}:{self.line}"


@dataclass(frozen=True)
class Diagnostic:
    """One error or warning about a config file, printed as ``file:line: server.key: msg``."""

    severity: Severity
    message: str
    path: Path | None = None
    line: int | None = None
    server: str | None = None
    key: str | None = None
    column: int | None = None

    @property
    def is_error(self) -> bool:
        return self.severity == "error"

    def location(self) -> str:
        where = str(self.path) if self.path else "<config>"
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        return where

    def subject(self) -> str:
        if self.server and self.key:
            return f"{self.server}.{self.key}"
        return self.server or self.key or ""

    def __str__(self) -> str:
        subject = self.subject()
        prefix = f"{self.location()}: "
        if subject:
            prefix += f"{subject}: "
        tag = "" if self.is_error else "warning: "
        return f"{prefix}{tag}{self.message}"


@dataclass(frozen=True)
class OAuthSpec:
    """OAuth settings of an HTTP server. Present (possibly all-default) means OAuth is on."""

    client_id: str | None = None
    client_secret: str | None = None  # may be a ${...} reference
    client_name: str | None = None
    scope: str | None = None
    callback_port: int | None = None  # TOML callback_port / YAML redirect_port
    callback_path: str | None = None  # default /mcp/oauth/callback, applied by portico.auth
    callback_host: str | None = None  # TOML callback_hostname / YAML redirect_host
    redirect_uri: str | None = None
    # browser / device: a person signs in. client_credentials / cross_app: machine-to-
    # machine grants that never ask anybody (so background connects may run them).
    flow: Literal["browser", "device", "client_credentials", "cross_app"] = "browser"
    timeout: float = 300.0  # seconds the person has to finish signing in
    # client_secret_basic / client_secret_post / private_key_jwt; None = basic with a
    # secret, private_key_jwt with client_assertion_key.
    token_endpoint_auth_method: str | None = None
    client_assertion_key: str | None = None  # PEM private key file for private_key_jwt
    issuer: str | None = None  # the authorization server the client belongs to
    # cross_app (identity assertion, SEP-990): the enterprise IdP's token endpoint, the
    # client there, and the ID token to exchange for an ID-JAG (may be ${...} references).
    idp_token_endpoint: str | None = None
    idp_client_id: str | None = None
    idp_client_secret: str | None = None
    id_token: str | None = None
    # Local development only: OAuth endpoints on private addresses, other origins on
    # loopback and plain http are let through (see docs/security.md).
    allow_private_endpoints: bool = False


@dataclass(frozen=True)
class ClientCert:
    cert: str
    key: str | None = None
    password: str | None = None  # may be a ${...} reference


@dataclass(frozen=True)
class IdentityHeader:
    name: str
    value_from: Literal["static", "profile"] = "static"
    value: str | None = None


@dataclass(frozen=True)
class ToolFilter:
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    resources: bool = True  # offer list_resources / read_resource when the server has them
    prompts: bool = True  # offer list_prompts / get_prompt when the server has them


@dataclass(frozen=True)
class SamplingSpec:
    enabled: bool = True
    model: str | None = None
    max_tokens_cap: int = 4096
    timeout: float = 30.0
    max_rpm: int = 10
    max_tool_rounds: int = 5
    allowed_models: tuple[str, ...] = ()
    log_level: Literal["debug", "info", "warning"] = "info"


@dataclass(frozen=True)
class ElicitationSpec:
    enabled: bool = True
    timeout: float = 300.0
    allow_url: bool = False  # URL-mode elicitation: shown to the person, never opened


@dataclass(frozen=True)
class SandboxSpec:
    """``sandbox``: where a stdio server runs (``portico.runtime.sandbox``).

    ``enabled`` is None when unset: a project server is sandboxed, a global one when the
    top-level ``sandbox.enabled`` says so (``ServerSpec.sandbox_by_default``). Paths are
    kept as written (``~``, relative to the project or config file's folder); hosts are
    ``host`` or ``host:port``.
    """

    enabled: bool | None = None
    read: tuple[str, ...] = ()
    write: tuple[str, ...] = ()
    network_allow: tuple[str, ...] = ()
    # Learn mode: every host is let through and reported (yours to turn on, never a
    # project's: ``ServerSpec.sandbox_learns``).
    network_learn: bool = False


@dataclass(frozen=True)
class ToolCost:
    low: float
    high: float
    note: str | None = None

    @property
    def is_range(self) -> bool:
        return self.low != self.high


@dataclass(frozen=True)
class Replaces:
    """The global server a project server of the same name replaces (set by the loader)."""

    source: str  # "file:line" of the global entry
    target: str  # its transport target: "http <url>" or "stdio <command args>"
    same_target: bool  # the project entry connects to exactly the same target


DEFAULT_TOOL_TIMEOUT = 30.0
DEFAULT_CONNECT_TIMEOUT = 60.0
DEFAULT_DEFER_TOOLS = 10
# MCP Apps views running at once in a chat transcript (chat.live_views): each costs
# ~65-70 MiB (PSS, tests/benchmarks/test_bench_chat_views.py); the rest wait unloaded.
DEFAULT_LIVE_VIEWS = 3
DEFAULT_DISCOVERY_CONCURRENCY = 4
DEFAULT_COST_UNIT = "credits"
DEFAULT_OAUTH_CALLBACK_PATH = "/mcp/oauth/callback"


@dataclass(frozen=True)
class ServerSpec:
    name: str
    source: Source
    transport: Transport
    enabled: bool = True
    # stdio
    command: str | None = None
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    cwd: str | None = None
    # HTTP / SSE
    url: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    oauth: OAuthSpec | None = None
    client_cert: ClientCert | None = None
    ca_cert: str | None = None  # PEM of extra CAs to trust for this server (private CA)
    identity_header: IdentityHeader | None = None
    # behaviour
    protocol: Protocol = Protocol.AUTO
    timeout: float = DEFAULT_TOOL_TIMEOUT
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
    lazy: bool = False
    idle_timeout_seconds: float = 0.0
    max_lifetime_seconds: float = 0.0
    always_load: bool = False
    supports_parallel_tool_calls: bool = False
    events: bool = False
    tools: ToolFilter = field(default_factory=ToolFilter)
    sampling: SamplingSpec = field(default_factory=SamplingSpec)
    elicitation: ElicitationSpec = field(default_factory=ElicitationSpec)
    tool_costs: tuple[tuple[str, ToolCost], ...] = ()
    spend_limit: float | None = None
    cost_unit: str = DEFAULT_COST_UNIT
    trust: TrustLevel = TrustLevel.DEFAULT
    replaces: Replaces | None = None  # project scope: the global server of this name
    # Added from a portico:// link (``from_link = true``, written by the link): reviewed
    # like a project server before it first connects, though it is in your global file.
    from_link: bool = False
    # Folders offered through roots/list (global servers; None = unset). After loading,
    # an unset one holds the top-level default. A change is announced, not a restart.
    roots: tuple[str, ...] | None = None
    # project scope: each way this server is looser than the person's rules (the global
    # server of its name, or the defaults), in plain words; set by the loader
    # (``portico.config.project_rules.SERVER_RULES``). Non-empty: it waits for a review.
    loosened: tuple[str, ...] = ()
    sandbox: SandboxSpec = field(default_factory=SandboxSpec)
    # global scope: the top-level sandbox.enabled (set by the loader); see ``sandboxed``
    sandbox_by_default: bool = False

    @property
    def sandboxed(self) -> bool:
        """Whether this server runs in the sandbox: its own ``sandbox.enabled``, else on
        for a project stdio server and for a global one when the top-level default is on."""
        if self.transport is not Transport.STDIO:
            return False
        if self.sandbox.enabled is not None:
            return self.sandbox.enabled
        return self.source.scope is Scope.PROJECT or self.sandbox_by_default

    @property
    def sandbox_learns(self) -> bool:
        """Its sandbox lets every host through and reports each (``sandbox.network.learn``):
        only for a server of yours; a project's ``learn`` is never used."""
        return self.sandboxed and self.sandbox.network_learn and self.source.scope is Scope.GLOBAL

    @property
    def env_dict(self) -> dict[str, str]:
        return dict(self.env)

    @property
    def headers_dict(self) -> dict[str, str]:
        return dict(self.headers)

    @property
    def tool_costs_dict(self) -> dict[str, ToolCost]:
        return dict(self.tool_costs)

    @property
    def is_remote(self) -> bool:
        return self.transport is not Transport.STDIO

    def canonical(self) -> dict[str, Any]:
        """Everything that defines what this server *is*, without where it was written."""
        data = asdict(self)
        data.pop("source")
        data.pop("name")
        data.pop("roots")  # a live setting: notifications/roots/list_changed, no restart
        for late in ("ca_cert", "loosened", "sandbox_by_default"):  # added later: unset,
            if not data[late]:  # older digests stay the same
                data.pop(late)
        if self.sandbox == SandboxSpec():
            data.pop("sandbox")
        return data

    def digest(self) -> str:
        """SHA-256 over the canonical config: any change means a restart."""
        blob = json.dumps(self.canonical(), sort_keys=True, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()


@dataclass(frozen=True)
class RuntimeSettings:
    defer_tools: int = DEFAULT_DEFER_TOOLS
    discovery_concurrency: int = DEFAULT_DISCOVERY_CONCURRENCY
    file_fallback_for_secrets: bool = False  # secrets.file_fallback
    approvals_mode: Literal["on", "off"] = "on"  # approvals.mode
    profile: str = "default"
    oauth_client_metadata_url: str | None = None  # oauth.client_metadata_url (CIMD)
    default_roots: tuple[str, ...] = ()  # roots: what global servers without their own get
    sandbox_all: bool = False  # sandbox.enabled: sandbox global stdio servers too
    chat_model_titles: bool = False  # chat.model_titles: the model writes chat titles
    endpoint_enabled: bool = False  # endpoint.enabled: the app serves the local endpoint
    endpoint_port: int = 0  # endpoint.port (0: any free port)
    chat_model: str | None = None  # chat.model: a new chat's model ("P/M")
    chat_servers: tuple[str, ...] = ()  # chat.servers: whose tools a chat offers (): all
    chat_tools: tuple[str, ...] = ()  # chat.tools: tool names / patterns offered; (): all
    chat_live_views: int = DEFAULT_LIVE_VIEWS  # chat.live_views: views loaded at once


ProviderKind = Literal["openai", "anthropic"]


@dataclass(frozen=True)
class ModelPrice:
    """What one model costs, per million tokens (``models.providers.P.prices.MODEL``),
    in the provider's ``currency``."""

    input: float
    output: float

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self.input + output_tokens * self.output) / 1_000_000


@dataclass(frozen=True)
class ProviderSpec:
    """One model provider (``models.providers.NAME``): an OpenAI-compatible server or the
    Anthropic Messages API. ``api_key`` is a ``${keyring:...}`` / ``${env:...}``
    reference (never a plain key), or None for a local server that needs none."""

    name: str
    source: Source
    kind: ProviderKind = "openai"
    base_url: str | None = None  # None: the kind's public endpoint
    api_key: str | None = None
    models: tuple[str, ...] = ()  # the models offered in pickers (the server may have more)
    default_model: str | None = None
    max_tokens: int = 4096
    temperature: float | None = None
    vision: bool = False  # images in tool results go to the model as images
    headers: tuple[tuple[str, str], ...] = ()
    # model name -> its price; no built-in prices: a price the person did not write
    # would be a guess, and providers change theirs
    prices: tuple[tuple[str, ModelPrice], ...] = ()
    currency: str = "USD"
    spend_limit: float | None = None  # per chat, in currency; None: no limit
    context_length: int | None = None  # tokens a request may hold; None: unknown
    projects: bool = False  # a project file's chat.model may name this provider's models
    # anthropic: deferred tools go behind the API's own tool search (defer_loading);
    # false for an Anthropic-compatible server without it (Portico's tool_search then)
    native_tool_search: bool = True

    def price(self, model: str) -> ModelPrice | None:
        """The price of ``model``: its own entry, else the longest priced name it starts
        with (a dated snapshot such as ``gpt-4.1-2025-04-14`` answers for ``gpt-4.1``)."""
        best: tuple[str, ModelPrice] | None = None
        for name, price in self.prices:
            if name == model:
                return price
            if model.startswith(name) and (best is None or len(name) > len(best[0])):
                best = (name, price)
        return best[1] if best else None

    @property
    def headers_dict(self) -> dict[str, str]:
        return dict(self.headers)

    @property
    def model(self) -> str | None:
        """The model used when none is named: ``default_model``, else the first listed."""
        return self.default_model or (self.models[0] if self.models else None)


@dataclass(frozen=True)
class ModelsConfig:
    """``models`` (YAML) / ``[models.providers.*]`` + ``default_model`` (TOML)."""

    providers: tuple[ProviderSpec, ...] = ()
    default: str | None = None  # "PROVIDER/model" (or just "PROVIDER")
    default_source: Source | None = None

    def provider(self, name: str) -> ProviderSpec | None:
        for spec in self.providers:
            if spec.name == name:
                return spec
        return None


@dataclass(frozen=True)
class Config:
    """The effective configuration after both scopes were read and merged."""

    servers: tuple[ServerSpec, ...] = ()
    settings: RuntimeSettings = field(default_factory=RuntimeSettings)
    diagnostics: tuple[Diagnostic, ...] = ()
    files: tuple[Path, ...] = ()  # every file that was read (existing ones)
    project: Path | None = None
    # files that did not parse (or could not be read): their servers are missing here;
    # portico.config.load.keep_previous() carries the last good ones over
    unparsed: tuple[Path, ...] = ()
    models: ModelsConfig = field(default_factory=ModelsConfig)

    def server(self, name: str) -> ServerSpec | None:
        for spec in self.servers:
            if spec.name == name:
                return spec
        return None

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.is_error)

    @property
    def warnings(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if not d.is_error)
