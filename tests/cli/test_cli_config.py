"""``portico config check|show|example`` through the real argument parser."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from portico import paths
from portico.cli.main import main
from portico.config import Scope, load_files, schema
from portico.config.example import uncomment
from portico.config.model import Dialect, ModelPrice


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_check_prints_every_diagnostic_and_fails_on_errors(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    g = write(
        paths.paths().global_toml,
        '[mcp.github]\ncommand = ["gh"]\n\n\n\n\ntimeout = 999999\n\n'
        '[mcp.fine]\ncommand = ["f"]\ntimout = 1\n',
    )
    code, out, _ = run(capsys, "config", "check", "--project", str(project))
    assert code == 1
    assert out.splitlines() == [
        f"{g}:7: github.timeout: 999999 is above the maximum 300000 (milliseconds)",
        f"{g}:11: fine.timout: warning: unknown key, ignored; did you mean timeout?",
        "1 error, 1 warning; 1 server load (skipped: github)",
    ]


def test_check_clean_config_exits_zero(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(
        paths.project_yaml(project),
        "mcp_servers:\n  a:\n    command: a\n  b:\n    url: https://b.example.com\n",
    )
    code, out, _ = run(capsys, "config", "check", "--project", str(project))
    assert (code, out) == (0, "0 errors, 0 warnings; 2 servers load\n")


def test_check_without_files(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "config", "check", "--project", str(project))
    assert (code, out) == (0, "no config files found (see `portico config example mcp`)\n")


def test_check_one_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = write(
        tmp_path / "other" / "config.yaml",
        "mcp_servers:\n  x:\n    command: x\n    tool_costs: {a: lots}\n",
    )
    code, out, _ = run(capsys, "config", "check", "--file", str(f))
    assert code == 1
    assert out.splitlines()[0] == (
        f"{f}:4: x.tool_costs.a: must be a number of credits, [low, high] or "
        "{credits: ..., note: ...}, not 'lots'; the server is skipped so that a declared "
        "budget is never dropped"
    )
    code, out, _ = run(capsys, "config", "check", "--file", str(tmp_path / "missing.toml"))
    assert (code, out) == (1, f"{tmp_path / 'missing.toml'}: no such file\n")


def test_check_reports_syntax_errors_with_column(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = write(paths.project_toml(project), '[mcp.a]\ncommand = ["a"\n')
    code, out, _ = run(capsys, "config", "check", "--project", str(project))
    assert code == 1
    assert re.match(rf"{re.escape(str(f))}:3:1: not valid TOML: ", out)


SECRETS_TOML = """
[mcp.api]
url = "https://api.example.com/mcp"
headers = { Authorization = "Bearer sk-live-abcdef", X-Ref = "Bearer ${env:API_TOKEN}" }
client_cert = ["c.crt", "c.key", "hunter2"]

[mcp.api.oauth]
client_id = "public-id"
client_secret = "very-secret-value"

[mcp.local]
command = ["tool", "--flag"]
environment = { PLAIN = "p4ssw0rd", REF = "${keyring:tool-key}" }
"""


def test_show_masks_secret_values(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = write(paths.paths().global_toml, SECRETS_TOML)
    code, out, _ = run(capsys, "config", "show", "--project", str(project))
    assert code == 0
    for secret in ("sk-live-abcdef", "hunter2", "very-secret-value", "p4ssw0rd"):
        assert secret not in out
    assert f"api  (http, enabled, global)  {f}:2" in out
    assert f"local  (stdio, enabled, global)  {f}:11" in out
    assert "Authorization=********" in out
    assert "X-Ref=Bearer ${env:API_TOKEN}" in out
    assert "REF=${keyring:tool-key}" in out and "PLAIN=********" in out
    assert "client_id=public-id" in out
    assert "command: tool" in out and "args: --flag" in out


def test_show_json(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    g = write(paths.paths().global_toml, SECRETS_TOML)
    p = write(
        paths.project_yaml(project),
        "mcp:\n  defer_tools: 3\nmcp_servers:\n  local:\n    command: project-tool\n    bogus: 1\n",
    )
    code, out, _ = run(capsys, "config", "show", "--json", "--project", str(project))
    assert code == 0
    data = json.loads(out)
    assert "very-secret-value" not in out and "hunter2" not in out
    servers = {s["name"]: s for s in data["servers"]}
    assert list(servers) == ["api", "local"]
    api = servers["api"]
    assert api["scope"] == "global"
    assert api["source"] == {"path": str(g), "line": 2, "dialect": "toml"}
    assert api["headers"] == {"Authorization": "********", "X-Ref": "Bearer ${env:API_TOKEN}"}
    assert api["oauth"]["client_secret"] == "********"
    assert api["client_cert"]["password"] == "********"
    local = servers["local"]  # the project entry replaced the global one
    assert local["scope"] == "project" and local["command"] == "project-tool"
    assert local["source"] == {"path": str(p), "line": 4, "dialect": "yaml"}
    assert data["settings"]["defer_tools"] == 3
    assert [d["text"] for d in data["diagnostics"]] == [
        f"{p}:6: local.bogus: warning: unknown key, ignored"
    ]


@pytest.mark.parametrize(("fmt", "name"), [("toml", "mcp.toml"), ("yaml", "config.yaml")])
def test_example_round_trip(
    fmt: str, name: str, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, text, _ = run(capsys, "config", "example", "mcp", "--format", fmt)
    assert code == 0
    # Everything is commented out: as written it defines nothing.
    commented = write(project / "commented" / name, text)
    assert load_files([(commented, Scope.GLOBAL)]).servers == ()
    # Uncommented, as your own global file, it parses and validates with no error and no
    # warning. (As a project file its client identity setting would be ignored: a project
    # may not choose it.)
    target = write(paths.paths().config_dir / name, uncomment(text))
    code, out, _ = run(capsys, "config", "check", "--project", str(project))
    assert (code, out) == (0, "0 errors, 0 warnings; 2 servers load\n")
    config = load_files([(target, Scope.GLOBAL)])
    stdio, http = config.servers
    assert stdio.timeout == 30.0 and stdio.connect_timeout == 60.0
    assert http.oauth is not None and http.oauth.timeout == 300.0
    assert config.settings.defer_tools == 10
    [local] = config.models.providers
    assert local.price("example-model") == ModelPrice(0.5, 1.5)
    assert (local.spend_limit, local.context_length) == (1.0, 32768)


@pytest.mark.parametrize("dialect", list(Dialect))
def test_example_shows_every_key_with_a_one_line_explanation(
    dialect: Dialect, capsys: pytest.CaptureFixture[str]
) -> None:
    _, text, _ = run(capsys, "config", "example", "mcp", "--format", dialect.value)
    lines = text.splitlines()
    sep = " =" if dialect is Dialect.TOML else ":"
    for spec in schema.KEYS:
        spelling = spec.spelling(dialect)
        if spec.type == "table" and dialect is Dialect.TOML:
            dotted = re.escape(".".join(spec.path(dialect)))
            pattern = rf"^#\[mcp\.example-\w+\.{dotted}\]$"
        else:
            pattern = rf"^\s*#{re.escape(spelling)}{sep}( .*)?  # \S"
        assert any(re.match(pattern, line) for line in lines), (dialect, spec.name)
    timeout = next(line for line in lines if re.match(r"^\s*#timeout", line))
    expected = "#timeout = 30000  # " if dialect is Dialect.TOML else "#timeout: 30  # "
    assert timeout.strip().startswith(expected)


def test_show_masks_credentials_in_urls(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(
        paths.paths().global_toml,
        '[mcp.hosted]\nurl = "https://me:pw-123@mcp.example.com/mcp?api_key=k-456&team=core"\n'
        '[mcp.referenced]\nurl = "https://mcp.example.com/mcp?token=${env:TOKEN}"\n',
    )
    for argv in (("config", "show"), ("config", "show", "--json")):
        code, out, _ = run(capsys, *argv, "--project", str(project))
        assert code == 0
        assert "pw-123" not in out and "k-456" not in out
        assert "https://me:***@mcp.example.com/mcp?api_key=***&team=core" in out
        assert "https://mcp.example.com/mcp?token=${env:TOKEN}" in out
