"""``portico mcp add`` and ``portico mcp import``, run in-process on real files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from portico import paths
from portico.cli.main import main
from portico.config import load
from portico.config.model import Transport
from portico.config.presets import PRESETS, preset_fields

FIXTURES = Path(__file__).parents[1] / "config" / "import_fixtures"

COMMENTED = """\
# Servers I use every day.

# The memory server keeps notes between chats.
[mcp.memory]
command = ["npx", "-y", "@modelcontextprotocol/server-memory"]  # pinned by npx cache
timeout = 60000
"""


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def global_toml() -> Path:
    return paths.paths().global_toml


# -- mcp add ------------------------------------------------------------------------------


@pytest.mark.parametrize("preset", list(PRESETS))
def test_add_each_preset(preset: str, project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(
        capsys, "mcp", "add", f"my-{preset}", "--preset", preset, "--project", str(project)
    )
    assert (code, err) == (0, "")
    assert out.startswith(f"Added 'my-{preset}' to {global_toml()}: stdio: ")
    spec = load().server(f"my-{preset}")
    assert spec is not None
    expected = preset_fields(preset, project=project)
    assert spec.transport is Transport.STDIO
    assert (spec.command, list(spec.args)) == (expected["command"], expected["args"])
    assert spec.env_dict == expected.get("env", {})


def test_github_preset_says_which_secret_to_store(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "mcp", "add", "gh", "--preset", "github")
    assert code == 0
    assert "Store the secret it uses: portico secret set GITHUB_PERSONAL_ACCESS_TOKEN" in out
    assert "Needs Node.js (npx) and a GitHub personal access token." in out


def test_flags_on_the_same_line_win_over_the_preset(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(
        capsys,
        "mcp",
        "add",
        "gh",
        "--preset",
        "github",
        "--env",
        "GITHUB_PERSONAL_ACCESS_TOKEN=${env:GH_TOKEN}",
        "--env",
        "GITHUB_TOOLSETS=repos",
    )
    assert (code, err) == (0, "")
    code, _, err = run(
        capsys,
        "mcp",
        "add",
        "ev",
        "--preset",
        "everything",
        "--",
        "node",
        "/opt/everything/dist/index.js",
        "stdio",
    )
    assert (code, err) == (0, "")
    code, _, err = run(
        capsys,
        "mcp",
        "add",
        "remote-ev",
        "--preset",
        "everything",
        "--url",
        "http://127.0.0.1:3001/mcp",
    )
    assert (code, err) == (0, "")
    config = load()
    gh = config.server("gh")
    assert gh is not None and gh.env_dict == {
        "GITHUB_PERSONAL_ACCESS_TOKEN": "${env:GH_TOKEN}",
        "GITHUB_TOOLSETS": "repos",
    }
    ev = config.server("ev")
    assert ev is not None and (ev.command, ev.args) == (
        "node",
        ("/opt/everything/dist/index.js", "stdio"),
    )
    remote = config.server("remote-ev")
    assert remote is not None
    assert (remote.transport, remote.url, remote.command) == (
        Transport.HTTP,
        "http://127.0.0.1:3001/mcp",
        None,
    )


def test_filesystem_preset_directories(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    notes = tmp_path / "notes"
    code, _, _ = run(
        capsys,
        "mcp",
        "add",
        "files",
        "--preset",
        "filesystem",
        "--directory",
        str(notes),
        "--directory",
        str(project),
    )
    assert code == 0
    spec = load().server("files")
    assert spec is not None
    assert spec.args[2:] == (str(notes), str(project))


def test_command_form_with_options_before_and_after_the_name(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(
        capsys,
        "mcp",
        "add",
        "--env",
        "A=1",
        "tools",
        "--env",
        "B=${keyring:tools-key}",
        "--",
        "python",
        "-m",
        "my_tools",
        "--env",
        "not-an-option",
    )
    assert (code, err) == (0, "")
    assert out == (
        f"Added 'tools' to {global_toml()}: stdio: python -m my_tools --env not-an-option\n"
    )
    spec = load().server("tools")
    assert spec is not None
    assert (spec.command, spec.args) == ("python", ("-m", "my_tools", "--env", "not-an-option"))
    assert spec.env_dict == {"A": "1", "B": "${keyring:tools-key}"}


def test_url_form_with_headers_and_sse(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(
        capsys,
        "mcp",
        "add",
        "events",
        "--url",
        "https://events.example.com/sse",
        "--transport",
        "sse",
        "--header",
        "Authorization: Bearer ${env:EVENTS_TOKEN}",
        "--header",
        "X-Team=a=b",
    )
    assert (code, err) == (0, "")
    assert out == f"Added 'events' to {global_toml()}: sse: https://events.example.com/sse\n"
    spec = load().server("events")
    assert spec is not None
    assert spec.transport is Transport.SSE
    assert spec.headers_dict == {"Authorization": "Bearer ${env:EVENTS_TOKEN}", "X-Team": "a=b"}


def test_project_scope_writes_the_project_file(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(
        capsys,
        "mcp",
        "add",
        "mem",
        "--preset",
        "memory",
        "--scope",
        "project",
        "--project",
        str(project),
    )
    assert code == 0
    assert str(paths.project_config_dir(project.resolve())) in out
    assert not global_toml().exists()
    spec = load(project).server("mem")
    assert spec is not None and spec.source.scope.value == "project"


def test_duplicate_is_refused_and_the_file_is_untouched(
    capsys: pytest.CaptureFixture[str],
) -> None:
    global_toml().parent.mkdir(parents=True, exist_ok=True)
    global_toml().write_text(COMMENTED)
    code, out, err = run(capsys, "mcp", "add", "memory", "--preset", "everything")
    assert (code, out) == (2, "")
    assert err == (
        f"portico mcp add: a server named 'memory' already exists in {global_toml()}; "
        "choose another name, or remove it first with `portico mcp remove memory`\n"
    )
    assert global_toml().read_text() == COMMENTED


def test_add_keeps_the_comments_of_the_file(capsys: pytest.CaptureFixture[str]) -> None:
    global_toml().parent.mkdir(parents=True, exist_ok=True)
    global_toml().write_text(COMMENTED)
    code, _, _ = run(capsys, "mcp", "add", "fetch", "--preset", "fetch")
    assert code == 0
    text = global_toml().read_text()
    assert text.startswith(COMMENTED)
    assert 'command = ["uvx", "mcp-server-fetch"]' in text[len(COMMENTED) :]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["bad.name", "--", "x"],
            "server name 'bad.name' contains a dot: use ASCII letters, digits, - and _; "
            "for example 'bad-name'",
        ),
        (
            ["x", "--url", "https://a.example", "--", "cmd"],
            "give either a command after -- or --url, not both",
        ),
        (
            ["x"],
            "say how to reach the server: a command after -- (portico mcp add NAME -- npx "
            "-y some-server), --url URL, or --preset NAME",
        ),
        (["x", "--env", "NOVALUE", "--", "cmd"], "--env 'NOVALUE': write it as NAME=VALUE"),
        (
            ["x", "--header", "A=b", "--", "cmd"],
            "--header is for URL servers; a command server takes --env",
        ),
        (
            ["x", "--url", "https://a.example", "--env", "A=b"],
            "--env is for command (stdio) servers; a URL server takes --header",
        ),
        (
            ["x", "--preset", "nope"],
            "unknown preset 'nope'; the presets are: codex, everything, filesystem, memory, "
            "github, fetch",
        ),
        (
            ["x", "--preset", "memory", "--directory", "/tmp"],
            "--directory is only for presets that take folders (filesystem)",
        ),
        (
            ["x", "--transport", "sse", "--", "cmd"],
            "--transport is for URL servers (a command server uses stdio)",
        ),
    ],
)
def test_usage_errors(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "mcp", "add", *argv)
    assert (code, out) == (2, "")
    assert err == f"portico mcp add: {message}\n"
    assert not global_toml().exists()


# -- mcp import ---------------------------------------------------------------------------


def test_import_into_a_commented_file_keeps_its_comments(
    capsys: pytest.CaptureFixture[str],
) -> None:
    global_toml().parent.mkdir(parents=True, exist_ok=True)
    global_toml().write_text(COMMENTED)
    code, out, err = run(
        capsys,
        "mcp",
        "import",
        "claude-desktop",
        "--from",
        str(FIXTURES / "claude_desktop_config.json"),
    )
    assert (code, err) == (0, "")
    text = global_toml().read_text()
    assert text.startswith(COMMENTED)
    config = load()
    assert [s.name for s in config.servers] == [
        "memory",
        "filesystem",
        "github",
        "weather-api",
        "legacy-events",
        "sqlite",
    ]
    assert config.diagnostics == ()
    weather = config.server("weather-api")
    assert weather is not None and weather.headers_dict == {"Authorization": "Bearer abc123"}
    assert "Imported 5 servers:" in out
    assert "  + weather-api -> " in out and "(was 'weather.api')" in out
    assert "Not converted as written (5):" in out
    assert "  - sqlite.autoApprove: unknown field; not converted" in out
    assert "  - broken: has neither a command nor a url; server not imported" in out


def test_import_never_overwrites_without_replace(capsys: pytest.CaptureFixture[str]) -> None:
    global_toml().parent.mkdir(parents=True, exist_ok=True)
    global_toml().write_text('[mcp.sqlite]\ncommand = ["mine"]  # my own sqlite\n')
    code, out, _ = run(
        capsys,
        "mcp",
        "import",
        "claude-desktop",
        "--from",
        str(FIXTURES / "claude_desktop_config.json"),
    )
    assert code == 0
    assert f"  - sqlite: already defined in {global_toml()}; pass --replace to overwrite it" in out
    sqlite = load().server("sqlite")
    assert sqlite is not None and sqlite.command == "mine"

    code, out, _ = run(
        capsys,
        "mcp",
        "import",
        "claude-desktop",
        "--replace",
        "--from",
        str(FIXTURES / "claude_desktop_config.json"),
    )
    assert code == 0
    assert f"  + sqlite -> {global_toml()} (replaced): stdio: uvx mcp-server-sqlite" in out
    sqlite = load().server("sqlite")
    assert sqlite is not None and sqlite.command == "uvx"
    assert sqlite.env_dict == {"DEBUG": "1", "DB_DIR": "$${HOME}/db"}


def test_dry_run_writes_nothing_and_shows_the_diff(capsys: pytest.CaptureFixture[str]) -> None:
    global_toml().parent.mkdir(parents=True, exist_ok=True)
    global_toml().write_text(COMMENTED)
    code, out, _ = run(
        capsys, "mcp", "import", "cursor", "--dry-run", "--from", str(FIXTURES / "cursor_mcp.json")
    )
    assert code == 0
    assert global_toml().read_text() == COMMENTED
    assert f"+++ {global_toml()}" in out
    assert "+[mcp.linear]" in out
    assert out.rstrip().endswith("Dry run: nothing was written.")


def test_vscode_import_lists_the_secrets_to_set(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copytree(FIXTURES / "vscode_workspace" / ".vscode", project / ".vscode")
    code, out, _ = run(
        capsys, "mcp", "import", "vscode", "--scope", "project", "--project", str(project)
    )
    assert code == 0
    assert f"Read the VS Code config: {project.resolve() / '.vscode' / 'mcp.json'}" in out
    assert "Store these secrets before the servers that use them can start:" in out
    assert "  portico secret set perplexity-key   # Perplexity API Key; used by Perplexity" in out
    assert "  portico secret set gh_token   # GitHub PAT; used by github" in out
    spec = load(project).server("workspace-files")
    assert spec is not None and spec.args[-1] == str(project.resolve())
    github = load(project).server("github")
    assert github is not None
    assert github.headers_dict == {"Authorization": "Bearer ${keyring:gh_token}"}


def test_claude_code_project_scope_takes_that_project(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = json.loads((FIXTURES / "claude.json").read_text())
    data["projects"][str(project.resolve())] = data["projects"].pop("/home/ada/work/shop")
    source = tmp_path / "claude.json"
    source.write_text(json.dumps(data))
    code, out, _ = run(
        capsys,
        "mcp",
        "import",
        "claude-code",
        "--from",
        str(source),
        "--scope",
        "project",
        "--project",
        str(project),
    )
    assert code == 0
    config = load(project)
    assert [s.name for s in config.servers] == ["postgres", "stripe", "internal"]
    internal = config.server("internal")
    assert internal is not None and internal.enabled is False
    stripe = config.server("stripe")
    assert stripe is not None and stripe.oauth is not None
    assert (stripe.oauth.client_id, stripe.oauth.callback_port) == ("shop-client", 8765)
    assert "3 user-level server(s) (sentry, notes, asana): import them with --scope global" in out
    assert f"from project {project.resolve()}" in out


def test_invalid_json_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "mcp.json"
    source.write_text('{\n  "mcpServers": {\n    "a": {"command": "x"\n  }\n')
    code, out, err = run(capsys, "mcp", "import", "cursor", "--from", str(source))
    assert (code, out) == (1, "")
    assert err.startswith(f"portico mcp import: {source}:5:1: not valid JSON: ")
    assert not global_toml().exists()


# -- YAML files ---------------------------------------------------------------------------

COMMENTED_YAML = """\
# My agent settings; Portico keeps the keys it does not know.
model: big-model

mcp_servers:
  # Notes between chats.
  memory:
    command: npx
    args: ["-y", "@modelcontextprotocol/server-memory"]   # flow style kept
"""


def global_yaml() -> Path:
    return paths.paths().global_yaml


def test_add_joins_the_yaml_file_that_holds_the_servers(
    capsys: pytest.CaptureFixture[str],
) -> None:
    global_yaml().parent.mkdir(parents=True, exist_ok=True)
    global_yaml().write_text(COMMENTED_YAML)
    code, out, err = run(
        capsys,
        "mcp",
        "add",
        "docs",
        "--url",
        "https://docs.example.com/mcp",
        "--header",
        "Authorization=Bearer ${keyring:docs-token}",
    )
    assert (code, err) == (0, "")
    assert out == f"Added 'docs' to {global_yaml()}: http: https://docs.example.com/mcp\n"
    assert global_yaml().read_text().startswith(COMMENTED_YAML)
    assert not global_toml().exists()
    docs = load().server("docs")
    assert docs is not None
    assert docs.headers_dict == {"Authorization": "Bearer ${keyring:docs-token}"}


def test_a_name_in_the_other_file_of_the_scope_is_refused(
    capsys: pytest.CaptureFixture[str],
) -> None:
    global_yaml().parent.mkdir(parents=True, exist_ok=True)
    global_yaml().write_text(COMMENTED_YAML)
    code, _, err = run(
        capsys, "mcp", "add", "memory", "--file", str(global_toml()), "--preset", "memory"
    )
    assert code == 2
    assert f"a server named 'memory' already exists in {global_yaml()}" in err
    assert not global_toml().exists()


def test_import_into_a_commented_yaml_file(capsys: pytest.CaptureFixture[str]) -> None:
    global_yaml().parent.mkdir(parents=True, exist_ok=True)
    global_yaml().write_text(COMMENTED_YAML)
    code, out, err = run(
        capsys,
        "mcp",
        "import",
        "claude-code",
        "--from",
        str(FIXTURES / "claude.json"),
        "--file",
        str(global_yaml()),
    )
    assert (code, err) == (0, "")
    text = global_yaml().read_text()
    assert text.startswith(COMMENTED_YAML.rstrip("\n"))
    assert "# Notes between chats." in text and "# flow style kept" in text
    config = load()
    assert config.diagnostics == ()
    assert [s.name for s in config.servers] == ["memory", "sentry", "notes", "asana"]
    asana = config.server("asana")
    assert asana is not None and asana.transport is Transport.SSE
    assert asana.headers_dict == {"X-Api-Key": "${env:ASANA_KEY}"}
    assert "import them with --scope project --project /home/ada/work/shop" in out


def test_file_in_a_project_folder_is_project_scope(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = project / ".portico" / "config.yaml"
    code, out, _ = run(capsys, "mcp", "add", "mem", "--file", str(target), "--preset", "memory")
    assert code == 0
    assert out.startswith(f"Added 'mem' to {target.resolve()}: stdio: npx")
    spec = load(project).server("mem")
    assert spec is not None and spec.source.scope.value == "project"


def test_a_server_that_would_not_start_is_not_written(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(
        capsys,
        "mcp",
        "add",
        "api",
        "--url",
        "https://api.example/mcp",
        "--header",
        "X-Key=${vault:api}",
    )
    assert code == 1
    assert out == ""
    lines = err.splitlines()
    assert lines[0] == "portico mcp add: not written: server 'api' would not start:"
    assert lines[1].startswith(f"  {global_toml()}:")
    assert "api.headers.X-Key: " in lines[1] and "unknown secret source 'vault'" in lines[1]
    assert lines[-1] == f"{global_toml()} is unchanged"
    assert not global_toml().exists()


def test_import_without_a_user_config_points_at_the_workspace_file(
    project: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    home = tmp_path / "empty-home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    (project / ".vscode").mkdir()
    (project / ".vscode" / "mcp.json").write_text('{"servers": {}}', encoding="utf-8")
    code, _, err = run(capsys, "mcp", "import", "vscode", "--project", str(project))
    assert code == 1
    assert "no VS Code config found" in err
    assert (
        "This project has its own .vscode/mcp.json: import it with "
        "`portico mcp import vscode --scope project`." in err
    )
