"""Every validation rule: a bad server entry next to a good one, in a real file.

Each case asserts the printed diagnostic (file, line, server.key, message) and that the
good server of the same file still loads.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from portico.config import Scope, load_files
from portico.config.model import Config

TOML_HEAD = '[mcp.good]\ncommand = ["good-server"]\n\n[mcp.bad]\n'  # bad's keys from line 5
YAML_HEAD = "mcp_servers:\n  good:\n    command: good-server\n  bad:\n"  # keys from line 5


def load_toml(tmp_path: Path, body: str, head: str = TOML_HEAD) -> tuple[Config, Path]:
    path = tmp_path / "mcp.toml"
    path.write_text(head + textwrap.dedent(body))
    return load_files([(path, Scope.GLOBAL)]), path


def load_yaml(tmp_path: Path, body: str, head: str = YAML_HEAD) -> tuple[Config, Path]:
    path = tmp_path / "config.yaml"
    path.write_text(head + textwrap.indent(textwrap.dedent(body), "    "))
    return load_files([(path, Scope.GLOBAL)]), path


def only_error(config: Config) -> str:
    assert len(config.errors) == 1, [str(d) for d in config.diagnostics]
    return str(config.errors[0])


def names(config: Config) -> list[str]:
    return [s.name for s in config.servers]


# (body of the bad server, line, "server.key", message)
TOML_ERRORS = [
    (
        'command = ["x"]\ntimeout = 999999\n',
        6,
        "bad.timeout",
        "999999 is above the maximum 300000 (milliseconds)",
    ),
    ('command = ["x"]\ntimeout = 0\n', 6, "bad.timeout", "0 is below the minimum 1 (milliseconds)"),
    (
        'command = ["x"]\ntimeout = 1.5\n',
        6,
        "bad.timeout",
        "must be a whole number of milliseconds, not 1.5",
    ),
    (
        'command = ["x"]\nconnect_timeout = "10s"\n',
        6,
        "bad.connect_timeout",
        "must be a whole number of milliseconds, not '10s'",
    ),
    ('command = ["x"]\nenabled = "yes"\n', 6, "bad.enabled", "must be true or false, not 'yes'"),
    (
        "command = []\n",
        5,
        "bad.command",
        'must not be empty: name the program to start, e.g. ["npx", "-y", "some-server"]',
    ),
    (
        "command = 42\n",
        5,
        "bad.command",
        'must be an array of strings (program and arguments), e.g. ["npx", "-y", "pkg"], not 42',
    ),
    (
        'url = "ftp://files.example.com"\n',
        5,
        "bad.url",
        "must start with http:// or https:// and name a host, not 'ftp://files.example.com'",
    ),
    (
        'url = "https://x.example.com/mcp"\noauth = { client_id = "c", callback_port = 70000 }\n',
        6,
        "bad.oauth.callback_port",
        "70000 is above the maximum 65535",
    ),
    (
        'url = "https://x.example.com/mcp"\n\n[mcp.bad.oauth]\ncallback_path = "callback"\n',
        8,
        "bad.oauth.callback_path",
        "must start with /, not 'callback'",
    ),
    (
        'command = ["x"]\nenvironment = { TOKEN = ["a"] }\n',
        6,
        "bad.environment.TOKEN",
        "must be a string, not a list",
    ),
    (
        'command = ["x"]\nenvironment = "TOKEN=1"\n',
        6,
        "bad.environment",
        "must be a table of names to strings, not 'TOKEN=1'",
    ),
    (
        'command = ["x"]\nenvironment = { A = "1" }\nenv = { B = "2" }\n',
        7,
        "bad.env",
        "environment and env mean the same thing: keep one of them",
    ),
    (
        'url = "https://x.example.com"\nheaders = { Authorization = "Bearer ${vault:tok}" }\n',
        6,
        "bad.headers.Authorization",
        "'${vault:tok}' names an unknown secret source 'vault': write ${env:NAME} or "
        "${keyring:NAME}",
    ),
    (
        'command = ["x"]\ntrust = "maybe"\n',
        6,
        "bad.trust",
        "must be default, full or untrusted, not 'maybe'",
    ),
    (
        'url = "https://x.example.com"\ntransport = "websocket"\n',
        6,
        "bad.transport",
        "must be http or sse, not 'websocket'",
    ),
    (
        'url = "https://x.example.com"\ntransport = "stdio"\n',
        6,
        "bad.transport",
        "stdio needs command, but this server only sets url: use http or sse",
    ),
    (
        'url = "https://x.example.com"\nclient_cert = ["only-one.pem"]\n',
        6,
        "bad.client_cert",
        "must be a certificate path, [cert, key] or [cert, key, password], not a list",
    ),
    ('command = ["x"]\ntools = "all"\n', 6, "bad.tools", "must be a table of settings, not 'all'"),
    (
        'command = ["x"]\n[mcp.bad.tools]\ninclude = "read_file"\n',
        7,
        "bad.tools.include",
        "must be a list of strings, not 'read_file'",
    ),
    (
        'command = ["x"]\n[mcp.bad.sampling]\nmax_tokens_cap = 0\n',
        7,
        "bad.sampling.max_tokens_cap",
        "0 is below the minimum 1",
    ),
    (
        'command = ["x"]\nprotocol = "2024"\n',
        6,
        "bad.protocol",
        "must be auto or legacy, not '2024'",
    ),
    (
        'command = ["x"]\ncwd = ""\n',
        6,
        "bad.cwd",
        "must not be empty",
    ),
    (
        'url = "https://m.example.com/mcp"\noauth = { flow = "client_credentials" }\n',
        6,
        "bad.oauth.flow",
        "client_credentials sign-in needs oauth.client_id, oauth.client_secret "
        "(secrets as ${keyring:NAME})",
    ),
    (
        'url = "https://m.example.com/mcp"\n'
        'oauth = { flow = "client_credentials", client_id = "c", '
        'token_endpoint_auth_method = "private_key_jwt" }\n',
        6,
        "bad.oauth.flow",
        "client_credentials sign-in needs oauth.client_assertion_key (secrets as ${keyring:NAME})",
    ),
]


@pytest.mark.parametrize(("body", "line", "subject", "message"), TOML_ERRORS)
def test_toml_rule(tmp_path: Path, body: str, line: int, subject: str, message: str) -> None:
    config, path = load_toml(tmp_path, body)
    assert only_error(config) == f"{path}:{line}: {subject}: {message}"
    assert names(config) == ["good"]


YAML_ERRORS = [
    (
        "url: https://m.example.com/mcp\noauth:\n  flow: cross_app\n  client_id: c\n",
        7,
        "bad.oauth.flow",
        "cross_app sign-in needs oauth.client_secret, oauth.idp_token_endpoint, oauth.id_token "
        "(secrets as ${keyring:NAME})",
    ),
    ("command: x\ntimeout: 999\n", 6, "bad.timeout", "999 is above the maximum 300 (seconds)"),
    ("command: x\ntimeout: 0\n", 6, "bad.timeout", "0 is below the minimum 0.001 (seconds)"),
    (
        "command: x\ntimeout: 30s\n",
        6,
        "bad.timeout",
        "must be a number of seconds, not '30s'",
    ),
    ("command: x\nlazy: maybe\n", 6, "bad.lazy", "must be true or false, not 'maybe'"),
    ('command: ""\n', 5, "bad.command", "must not be empty: name the program to start"),
    (
        "command: {program: x}\n",
        5,
        "bad.command",
        "must be a string (put arguments in args), not a mapping",
    ),
    ("command: x\nargs: -y\n", 6, "bad.args", "must be a list of strings, not '-y'"),
    (
        "url: mcp.example.com/mcp\n",
        5,
        "bad.url",
        "must start with http:// or https:// and name a host, not 'mcp.example.com/mcp'",
    ),
    (
        "url: https://x.example.com\noauth:\n  redirect_port: 99999\n",
        7,
        "bad.oauth.redirect_port",
        "99999 is above the maximum 65535",
    ),
    (
        "url: https://x.example.com\noauth:\n  flow: qr\n",
        7,
        "bad.oauth.flow",
        "must be browser, device, client_credentials or cross_app, not 'qr'",
    ),
    (
        "url: https://x.example.com\nauth: basic\n",
        6,
        "bad.auth",
        "must be oauth or none, not 'basic'",
    ),
    (
        "command: x\nenv:\n  TOKEN: ${keyring:}\n",
        7,
        "bad.env.TOKEN",
        "'${keyring:}' is not a valid keyring reference: the name is empty",
    ),
    (
        "url: https://x.example.com\nclient_key: k.pem\n",
        6,
        "bad.client_key",
        "needs client_cert: add the certificate path too",
    ),
    (
        "command: x\nelicitation:\n  timeout: 0.5\n",
        7,
        "bad.elicitation.timeout",
        "0.5 is below the minimum 1 (seconds)",
    ),
    (
        "command: x\nidle_timeout_seconds: -5\n",
        6,
        "bad.idle_timeout_seconds",
        "-5 is below the minimum 0 (seconds)",
    ),
    (
        "command: x\nsampling:\n  log_level: trace\n",
        7,
        "bad.sampling.log_level",
        "must be debug, info or warning, not 'trace'",
    ),
    (
        "- just\n- a list\n",
        4,
        "bad",
        "must be a mapping of settings under bad:, not a list; this server is skipped",
    ),
]


@pytest.mark.parametrize(("body", "line", "subject", "message"), YAML_ERRORS)
def test_yaml_rule(tmp_path: Path, body: str, line: int, subject: str, message: str) -> None:
    config, path = load_yaml(tmp_path, body)
    assert only_error(config) == f"{path}:{line}: {subject}: {message}"
    assert names(config) == ["good"]


SKIP = "; the server is skipped so that a declared budget is never dropped"

BUDGET_ERRORS = [
    (
        "command: x\ntool_costs: lots\n",
        6,
        "bad.tool_costs",
        "must be a mapping of tool names to costs, not 'lots'",
    ),
    (
        "command: x\ntool_costs:\n  create_image: twenty\n",
        7,
        "bad.tool_costs.create_image",
        "must be a number of credits, [low, high] or {credits: ..., note: ...}, not 'twenty'",
    ),
    (
        "command: x\ntool_costs:\n  animate: {credits: [20, 5]}\n",
        7,
        "bad.tool_costs.animate.credits",
        "[20, 5] is not a range: write [low, high] with low <= high",
    ),
    (
        "command: x\ntool_costs:\n  animate: {credit: 5}\n",
        7,
        "bad.tool_costs.animate.credit",
        "unknown key in a tool cost; did you mean credits? (allowed: credits, note)",
    ),
    (
        "command: x\ntool_costs:\n  animate: {note: cheap}\n",
        7,
        "bad.tool_costs.animate",
        "needs credits (a number or [low, high])",
    ),
    (
        "command: x\ntool_costs:\n  animate: -3\n",
        7,
        "bad.tool_costs.animate",
        "-3 is below the minimum 0",
    ),
    ("command: x\nspend_limit: -1\n", 6, "bad.spend_limit", "-1 is below the minimum 0"),
    ("command: x\nspend_limit: lots\n", 6, "bad.spend_limit", "must be a number, not 'lots'"),
    ("command: x\ncost_unit: ''\n", 6, "bad.cost_unit", "must not be empty"),
    ("command: x\ncost_unit: 5\n", 6, "bad.cost_unit", "must be a string, not 5"),
]


@pytest.mark.parametrize(("body", "line", "subject", "message"), BUDGET_ERRORS)
def test_malformed_budget_skips_the_server_naming_the_key(
    tmp_path: Path, body: str, line: int, subject: str, message: str
) -> None:
    config, path = load_yaml(tmp_path, body)
    assert only_error(config) == f"{path}:{line}: {subject}: {message}{SKIP}"
    assert names(config) == ["good"]


def test_malformed_budget_in_toml(tmp_path: Path) -> None:
    config, path = load_toml(tmp_path, 'command = ["x"]\nspend_limit = "100"\n')
    assert only_error(config) == f"{path}:6: bad.spend_limit: must be a number, not '100'{SKIP}"
    assert names(config) == ["good"]


@pytest.mark.parametrize(
    ("header", "message"),
    [
        (
            '[mcp."my.server"]',
            "server name 'my.server' contains a dot: use ASCII letters, digits, - and _",
        ),
        (
            "[mcp.my__server]",
            "server name 'my__server' contains '__', which Portico reserves "
            "to join server and tool names: use a single _ or -",
        ),
        (
            '[mcp."my server"]',
            "server name 'my server' may only hold ASCII letters, digits, - "
            "and _ (no spaces, no dots)",
        ),
        (
            '[mcp."café"]',
            "server name 'café' may only hold ASCII letters, digits, - and _ (no spaces, no dots)",
        ),
    ],
)
def test_server_name_rules(tmp_path: Path, header: str, message: str) -> None:
    path = tmp_path / "mcp.toml"
    path.write_text(f'[mcp.good]\ncommand = ["g"]\n\n{header}\ncommand = ["x"]\n')
    config = load_files([(path, Scope.GLOBAL)])
    name = config.errors[0].server
    assert only_error(config) == f"{path}:4: {name}: {message}; this server is skipped"
    assert names(config) == ["good"]


def test_server_name_rules_yaml(tmp_path: Path) -> None:
    config, path = load_yaml(
        tmp_path, "", head="mcp_servers:\n  good:\n    command: g\n  a.b:\n    command: x\n"
    )
    assert only_error(config) == (
        f"{path}:4: a.b: server name 'a.b' contains a dot: use ASCII letters, digits, - and _; "
        "this server is skipped"
    )
    assert names(config) == ["good"]


def test_neither_command_nor_url(tmp_path: Path) -> None:
    config, path = load_toml(tmp_path, "enabled = true\n")
    assert only_error(config) == (
        f"{path}:4: bad: sets neither command (a local stdio server) nor url (an HTTP "
        "server): add one of them; this server is skipped"
    )
    assert names(config) == ["good"]


def test_several_errors_in_one_server_are_all_reported(tmp_path: Path) -> None:
    config, path = load_toml(tmp_path, 'command = ["x"]\ntimeout = -1\nenabled = 3\n')
    assert [str(d) for d in config.errors] == [
        f"{path}:6: bad.timeout: -1 is below the minimum 1 (milliseconds)",
        f"{path}:7: bad.enabled: must be true or false, not 3",
    ]
    assert names(config) == ["good"]


# --- warnings: the server still loads ---------------------------------------------------


def test_unknown_key_warns_with_the_closest_known_key(tmp_path: Path) -> None:
    config, path = load_toml(tmp_path, 'command = ["x"]\ntimout = 5000\nenviron = {}\n')
    assert config.errors == ()
    assert [str(d) for d in config.warnings] == [
        f"{path}:6: bad.timout: warning: unknown key, ignored; did you mean timeout?",
        f"{path}:7: bad.environ: warning: unknown key, ignored; did you mean environment?",
    ]
    assert names(config) == ["good", "bad"]
    assert config.server("bad").timeout == 30.0  # the default, not the misspelt value


def test_unknown_nested_key_suggests_within_its_table(tmp_path: Path) -> None:
    config, path = load_yaml(
        tmp_path, "url: https://x.example.com\noauth:\n  clientid: abc\n  xyzzy: 1\n"
    )
    assert [str(d) for d in config.warnings] == [
        f"{path}:7: bad.oauth.clientid: warning: unknown key, ignored; did you mean client_id?",
        f"{path}:8: bad.oauth.xyzzy: warning: unknown key, ignored",
    ]
    assert names(config) == ["good", "bad"]


def test_unknown_top_level_toml_key(tmp_path: Path) -> None:
    path = tmp_path / "mcp.toml"
    path.write_text('defer_tool = 3\n\n[github]\ncommand = ["x"]\n\n[mcp.good]\ncommand = ["g"]\n')
    config = load_files([(path, Scope.GLOBAL)])
    assert [str(d) for d in config.warnings] == [
        f"{path}:1: defer_tool: warning: unknown top-level key, ignored; did you mean defer_tools?",
        f"{path}:3: github: warning: unknown top-level key, ignored; servers go under [mcp.github]",
    ]
    assert names(config) == ["good"]


def test_yaml_top_level_keys_of_other_parts_are_ignored_silently(tmp_path: Path) -> None:
    config, _ = load_yaml(
        tmp_path, "", head="model: gpt\nplatforms: {a: 1}\n" + YAML_HEAD + "    command: x\n"
    )
    assert config.diagnostics == ()
    assert names(config) == ["good", "bad"]


def test_url_and_command_command_wins_with_a_warning(tmp_path: Path) -> None:
    config, path = load_toml(tmp_path, 'command = ["x"]\nurl = "https://x.example.com"\n')
    assert [str(d) for d in config.diagnostics] == [
        f"{path}:6: bad.url: warning: ignored: this server also sets command, and command "
        "wins (remove one of them)"
    ]
    bad = config.server("bad")
    assert bad is not None and bad.command == "x" and bad.url is None


def test_keys_of_the_other_transport_warn(tmp_path: Path) -> None:
    config, path = load_yaml(tmp_path, "url: https://x.example.com\nenv: {A: b}\n", head=YAML_HEAD)
    assert [str(d) for d in config.diagnostics] == [
        f"{path}:6: bad.env: warning: only used by stdio servers; ignored for this HTTP server"
    ]
    assert config.server("bad").env == ()  # type: ignore[union-attr]


def test_invalid_identity_header_is_a_warning_and_is_ignored(tmp_path: Path) -> None:
    config, path = load_yaml(
        tmp_path,
        "url: https://x.example.com\nidentity_header:\n  name: X-User\n  value_from: bogus\n",
    )
    assert [str(d) for d in config.diagnostics] == [
        f"{path}:8: bad.identity_header.value_from: warning: must be static or profile, not "
        "'bogus'; identity_header is ignored"
    ]
    bad = config.server("bad")
    assert bad is not None and bad.identity_header is None


def test_identity_header_static_needs_a_value(tmp_path: Path) -> None:
    config, path = load_yaml(
        tmp_path, "url: https://x.example.com\nidentity_header:\n  name: X-User\n"
    )
    assert [str(d) for d in config.diagnostics] == [
        f"{path}:6: bad.identity_header: warning: needs value when value_from is static; "
        "identity_header is ignored"
    ]
    assert names(config) == ["good", "bad"]


# --- top-level settings --------------------------------------------------------------------


def test_bad_setting_keeps_the_default(tmp_path: Path) -> None:
    path = tmp_path / "mcp.toml"
    path.write_text('defer_tools = -1\n\n[mcp.good]\ncommand = ["g"]\n')
    config = load_files([(path, Scope.GLOBAL)])
    assert only_error(config) == (
        f"{path}:1: defer_tools: -1 is below the minimum 0; the default 10 is used"
    )
    assert config.settings.defer_tools == 10
    assert names(config) == ["good"]


def test_yaml_settings(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(
        "mcp:\n  discovery_concurrency: 0\n  defer_tools: 0\nsecrets:\n  file_fallback: true\n"
        "approvals:\n  mode: off\nprofile: work\n"
    )
    config = load_files([(path, Scope.GLOBAL)])
    assert config.diagnostics == ()
    s = config.settings
    assert (
        s.discovery_concurrency,
        s.defer_tools,
        s.file_fallback_for_secrets,
        s.approvals_mode,
        s.profile,
    ) == (0, 0, True, "off", "work")


def test_yaml_bad_setting(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("approvals:\n  mode: sometimes\nmcp:\n  discovery_concurrency: many\n")
    config = load_files([(path, Scope.GLOBAL)])
    assert [str(d) for d in config.errors] == [
        f"{path}:2: approvals.mode: must be on or off, not 'sometimes'; the default on is used",
        f"{path}:4: mcp.discovery_concurrency: must be a whole number, not 'many'; the default "
        "4 is used",
    ]
    assert config.settings.approvals_mode == "on"


def test_toml_setting_written_inside_the_mcp_table(tmp_path: Path) -> None:
    path = tmp_path / "mcp.toml"
    path.write_text('[mcp]\ndefer_tools = 3\n\n[mcp.good]\ncommand = ["g"]\n')
    config = load_files([(path, Scope.GLOBAL)])
    assert only_error(config) == (
        f"{path}:2: mcp.defer_tools: defer_tools is a top-level setting: move it above the "
        "first [mcp...] table (written here it would be a server)"
    )
    assert names(config) == ["good"]
    assert config.settings.defer_tools == 10


def test_yaml_server_without_settings(tmp_path: Path) -> None:
    config, path = load_yaml(tmp_path, "", head=YAML_HEAD)
    assert only_error(config) == (
        f"{path}:4: bad: must be a mapping of settings under bad:, not empty (null); this "
        "server is skipped"
    )
    assert names(config) == ["good"]


def test_chat_model_titles_is_yours_to_turn_on(tmp_path: Path) -> None:
    mine = tmp_path / "config.yaml"
    mine.write_text("chat:\n  model_titles: true\n")
    assert load_files([(mine, Scope.GLOBAL)]).settings.chat_model_titles
    assert not load_files([]).settings.chat_model_titles  # off unless you turn it on
    theirs = tmp_path / "project.yaml"
    theirs.write_text("chat:\n  model_titels: false\n  model_titles: true\n")
    config = load_files([(theirs, Scope.PROJECT)])
    assert not config.settings.chat_model_titles
    assert [str(d) for d in config.diagnostics] == [
        f"{theirs}:2: chat.model_titels: warning: unknown key, ignored; did you mean model_titles?",
        f"{theirs}:3: chat.model_titles: warning: ignored: a project file may tighten but "
        "never loosen chat.model_titles (your setting is false); set it in your own "
        "config.yaml if you mean it",
    ]
