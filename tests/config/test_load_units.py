"""Both dialects map onto one model: units, the other dialect's spellings, positions."""

from __future__ import annotations

from pathlib import Path

from portico.config import Scope, parse_text
from portico.config.model import (
    ClientCert,
    IdentityHeader,
    OAuthSpec,
    Protocol,
    ToolCost,
    Transport,
    TrustLevel,
)
from portico.config.toml_dialect import key_lines


def one(text: str, name: str) -> object:
    config = parse_text(text, Path(name), Scope.GLOBAL)
    assert config.diagnostics == (), [str(d) for d in config.diagnostics]
    (spec,) = config.servers
    return spec


def test_toml_durations_are_milliseconds_yaml_seconds() -> None:
    toml = one(
        '[mcp.a]\ncommand = ["a"]\ntimeout = 1500\nconnect_timeout = 20000\n'
        "idle_timeout_seconds = 900\n[mcp.a.sampling]\ntimeout = 45000\n"
        "[mcp.a.elicitation]\ntimeout = 120000\n",
        "mcp.toml",
    )
    yaml = one(
        "mcp_servers:\n  a:\n    command: a\n    timeout: 1.5\n    connect_timeout: 20\n"
        "    idle_timeout_seconds: 900\n    sampling: {timeout: 45}\n"
        "    elicitation: {timeout: 120}\n",
        "config.yaml",
    )
    for spec in (toml, yaml):
        assert spec.timeout == 1.5  # type: ignore[attr-defined]
        assert spec.connect_timeout == 20.0  # type: ignore[attr-defined]
        assert spec.idle_timeout_seconds == 900.0  # _seconds keys are seconds in both
        assert spec.sampling.timeout == 45.0  # type: ignore[attr-defined]
        assert spec.elicitation.timeout == 120.0  # type: ignore[attr-defined]
    assert toml.canonical() == yaml.canonical()  # type: ignore[attr-defined]


def test_oauth_timeout_units() -> None:
    toml = one('[mcp.a]\nurl = "https://a.example.com"\noauth = { timeout = 600000 }\n', "mcp.toml")
    yaml = one(
        "mcp_servers:\n  a:\n    url: https://a.example.com\n    oauth: {timeout: 600}\n",
        "config.yaml",
    )
    assert toml.oauth.timeout == yaml.oauth.timeout == 600.0  # type: ignore[attr-defined]


def test_same_server_in_both_dialects_gives_the_same_model() -> None:
    toml = one(
        """
[mcp.gh]
command = ["npx", "-y", "server-github"]
environment = { TOKEN = "${keyring:gh}" }
cwd = "/srv"
timeout = 10000
enabled = false
always_load = true
trust = "untrusted"
protocol = "legacy"
tool_costs = { create = 2, render = { credits = [1, 3], note = "per page" } }
spend_limit = 50
cost_unit = "tokens"

[mcp.gh.tools]
include = ["list_*"]
exclude = ["delete"]
resources = false
""",
        "mcp.toml",
    )
    yaml = one(
        """
mcp_servers:
  gh:
    command: npx
    args: ["-y", "server-github"]
    env: {TOKEN: "${keyring:gh}"}
    cwd: /srv
    timeout: 10
    enabled: false
    always_load: true
    trust: untrusted
    protocol: legacy
    tool_costs:
      create: 2
      render: {credits: [1, 3], note: per page}
    spend_limit: 50
    cost_unit: tokens
    tools:
      include: ["list_*"]
      exclude: [delete]
      resources: false
""",
        "config.yaml",
    )
    assert toml.canonical() == yaml.canonical()  # type: ignore[attr-defined]
    assert toml.digest() == yaml.digest()  # type: ignore[attr-defined]
    assert toml.command == "npx" and toml.args == ("-y", "server-github")  # type: ignore[attr-defined]
    assert toml.env == (("TOKEN", "${keyring:gh}"),)  # type: ignore[attr-defined]
    assert toml.trust is TrustLevel.UNTRUSTED and toml.protocol is Protocol.LEGACY  # type: ignore[attr-defined]
    assert toml.tool_costs == (  # type: ignore[attr-defined]
        ("create", ToolCost(2.0, 2.0)),
        ("render", ToolCost(1.0, 3.0, "per page")),
    )
    assert toml.spend_limit == 50.0  # type: ignore[attr-defined]


def test_toml_accepts_yaml_spellings_and_yaml_accepts_toml_spellings() -> None:
    toml = one('[mcp.a]\ncommand = "prog"\nargs = ["--x"]\nenv = { K = "v" }\n', "mcp.toml")
    assert (toml.command, toml.args, toml.env) == ("prog", ("--x",), (("K", "v"),))  # type: ignore[attr-defined]
    yaml = one(
        "mcp_servers:\n  a:\n    command: [prog, --x]\n    args: [--y]\n    environment: {K: v}\n",
        "config.yaml",
    )
    assert (yaml.command, yaml.args, yaml.env) == ("prog", ("--x", "--y"), (("K", "v"),))  # type: ignore[attr-defined]


def test_oauth_spellings_of_both_dialects() -> None:
    toml = one(
        '[mcp.a]\nurl = "https://a.example.com"\n[mcp.a.oauth]\nclient_id = "c"\n'
        'client_secret = "${keyring:s}"\ncallback_port = 3118\ncallback_path = "/cb"\n'
        'callback_hostname = "localhost"\n',
        "mcp.toml",
    )
    yaml = one(
        "mcp_servers:\n  a:\n    url: https://a.example.com\n    auth: oauth\n    oauth:\n"
        "      client_id: c\n      client_secret: ${keyring:s}\n      redirect_port: 3118\n"
        "      callback_path: /cb\n      redirect_host: localhost\n",
        "config.yaml",
    )
    expected = OAuthSpec(
        client_id="c",
        client_secret="${keyring:s}",
        callback_port=3118,
        callback_path="/cb",
        callback_host="localhost",
    )
    assert toml.oauth == yaml.oauth == expected  # type: ignore[attr-defined]


def test_auth_oauth_without_table_and_auth_none() -> None:
    spec = one(
        "mcp_servers:\n  a:\n    url: https://a.example.com\n    auth: oauth\n", "config.yaml"
    )
    assert spec.oauth == OAuthSpec()  # type: ignore[attr-defined]
    spec = one('[mcp.a]\nurl = "https://a.example.com"\n', "mcp.toml")
    assert spec.oauth is None  # type: ignore[attr-defined]


def test_transports() -> None:
    assert one('[mcp.a]\nurl = "http://127.0.0.1:9/mcp"\n', "mcp.toml").transport is Transport.HTTP  # type: ignore[attr-defined]
    sse = one(
        "mcp_servers:\n  a:\n    url: https://a.example.com/sse\n    transport: sse\n",
        "config.yaml",
    )
    assert sse.transport is Transport.SSE  # type: ignore[attr-defined]
    alias = one(
        '[mcp.a]\nurl = "https://a.example.com"\ntransport = "streamable-http"\n', "mcp.toml"
    )
    assert alias.transport is Transport.HTTP  # type: ignore[attr-defined]


def test_client_cert_shapes_and_identity_header() -> None:
    spec = one(
        "mcp_servers:\n  a:\n    url: https://a.example.com\n"
        "    client_cert: [c.crt, c.key, '${env:PW}']\n"
        "    identity_header: {name: X-User-Id, value_from: profile}\n",
        "config.yaml",
    )
    assert spec.client_cert == ClientCert("c.crt", "c.key", "${env:PW}")  # type: ignore[attr-defined]
    assert spec.identity_header == IdentityHeader("X-User-Id", "profile", None)  # type: ignore[attr-defined]
    spec = one(
        '[mcp.a]\nurl = "https://a.example.com"\nclient_cert = "both.pem"\nclient_key = "k.pem"\n',
        "mcp.toml",
    )
    assert spec.client_cert == ClientCert("both.pem", "k.pem")  # type: ignore[attr-defined]


def test_env_numbers_and_booleans_become_strings() -> None:
    spec = one(
        "mcp_servers:\n  a:\n    command: a\n    env: {PORT: 8080, DEBUG: true}\n", "config.yaml"
    )
    assert spec.env == (("PORT", "8080"), ("DEBUG", "true"))  # type: ignore[attr-defined]


def test_spend_limit_zero_means_none() -> None:
    spec = one("mcp_servers:\n  a:\n    command: a\n    spend_limit: 0\n", "config.yaml")
    assert spec.spend_limit is None  # type: ignore[attr-defined]


def test_source_positions_toml() -> None:
    text = (
        "# header comment\n"  # 1
        "version = 1\n"  # 2
        "\n"  # 3
        "[mcp.alpha]\n"  # 4
        'command = ["a"]\n'  # 5
        "\n"  # 6
        '[mcp."beta"]\n'  # 7
        'url = "https://b.example.com"\n'  # 8
        "oauth = { client_id = 'x',\n"  # 9
        "  callback_port = 99999 }\n"  # 10
        "[mcp.gamma.tools]\n"  # 11 (gamma defined only through its sub-table)
        'include = ["x"]\n'  # 12
        "[mcp.gamma]\n"  # 13
        'command = """\nprog"""\n'  # 14-15
        "enabled = 1\n"  # 16
    )
    config = parse_text(text, Path("mcp.toml"))
    assert [(d.server, d.key, d.line) for d in config.errors] == [
        ("beta", "oauth.callback_port", 10),
        ("gamma", "enabled", 16),
    ]
    assert [(s.name, s.source.line) for s in config.servers] == [("alpha", 4)]


def test_key_lines_handles_strings_arrays_and_dotted_keys() -> None:
    text = (
        '[mcp.a]\ncommand = [\n  "x", # a comment with ] and }\n  "y",\n]\n'
        'environment.K = "va\\"l]"\n'
        "'quoted.key' = 'lit'\n"
        "nested = { inner = { deep = 1 } }\n"
    )
    lines = key_lines(text)
    assert lines[("mcp", "a", "command", 1)] == 4
    assert lines[("mcp", "a", "environment", "K")] == 6
    assert lines[("mcp", "a", "quoted.key")] == 7
    assert lines[("mcp", "a", "nested", "inner", "deep")] == 8


def test_source_positions_yaml() -> None:
    text = (
        "model: x\n"  # 1
        "mcp_servers:\n"  # 2
        "  # a comment\n"  # 3
        "  alpha:\n"  # 4
        "    command: a\n"  # 5
        "  beta:\n"  # 6
        "    url: https://b.example.com\n"  # 7
        "    headers:\n"  # 8
        "      A: ${vault:x}\n"  # 9
    )
    config = parse_text(text, Path("config.yaml"))
    assert [(d.server, d.key, d.line) for d in config.errors] == [("beta", "headers.A", 9)]
    assert [(s.name, s.source.line) for s in config.servers] == [("alpha", 4)]


def test_servers_under_a_near_miss_of_mcp_servers_get_a_warning_not_silence() -> None:
    for key in ("servers", "mcpServers", "mcp-servers", "MCP_Server"):
        text = f"model: gpt-4o\n{key}:\n  github:\n    command: npx\n    args: [gh]\n"
        config = parse_text(text, Path("config.yaml"), Scope.GLOBAL)
        assert config.servers == ()
        [warning] = [str(d) for d in config.diagnostics]
        assert "config.yaml:2" in warning and key in warning and "mcp_servers:" in warning
    # another program's keys of the same name but other content stay unremarked
    for text in ("servers: [a, b]\n", "servers:\n  region: eu\n", "mcp_servers: {}\n"):
        assert parse_text(text, Path("config.yaml"), Scope.GLOBAL).diagnostics == ()
