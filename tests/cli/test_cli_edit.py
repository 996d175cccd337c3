"""``portico config set|unset`` and ``portico mcp remove|enable|disable|rename``."""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest

from portico import paths
from portico.cli.edit_cmds import run_edit
from portico.cli.main import main
from portico.config.atomic import ConflictError
from portico.config.document import ConfigDocument
from portico.config.model import Scope
from portico.config.targets import choose_file, defining_file, defining_files

GLOBAL_TOML = """\
# my global servers
[mcp.github]
command = ["gh", "mcp-server"]  # the gh CLI
timeout = 10000

[mcp.docs]
url = "https://docs.example.com/mcp"
"""

PROJECT_YAML = """\
# project servers
mcp_servers:
  github:
    command: npx
    args: [-y, server-github]   # the project pins its own
"""


def changed_lines(before: str, after: str) -> list[str]:
    return [
        line
        for line in difflib.unified_diff(before.splitlines(), after.splitlines(), n=0)
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]


@pytest.fixture
def global_toml() -> Path:
    path = paths.paths().global_toml
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(GLOBAL_TOML)
    return path


@pytest.fixture
def project_yaml(project: Path) -> Path:
    path = paths.project_yaml(project)
    path.write_text(PROJECT_YAML)
    return path


def run(*argv: str) -> int:
    return main(list(argv))


def test_set_changes_one_line_of_the_defining_file(
    global_toml: Path, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run("config", "set", "docs.timeout", "5000", "--project", str(project)) == 0
    out = capsys.readouterr().out
    assert f"{global_toml}: docs.timeout set" in out
    assert changed_lines(GLOBAL_TOML, global_toml.read_text()) == ["+timeout = 5000"]


def test_set_values_are_read_in_the_files_dialect(global_toml: Path, project: Path) -> None:
    assert (
        run("config", "set", "docs.headers", "{ X-Team = 'core' }", "--project", str(project)) == 0
    )
    assert (
        run(
            "config", "set", "docs.tools.include", '["search", "read_*"]', "--project", str(project)
        )
        == 0
    )
    assert (
        run("config", "set", "docs.url", "https://other.example.com/mcp", "--project", str(project))
        == 0
    )
    doc = ConfigDocument.load(global_toml)
    assert doc.get("docs", "headers") == {"X-Team": "core"}
    assert doc.get("docs", "tools", "include") == ["search", "read_*"]
    assert doc.get("docs", "url") == "https://other.example.com/mcp"
    assert "headers = { X-Team = 'core' }\n" in global_toml.read_text()


def test_set_refuses_a_value_that_makes_the_server_invalid(
    global_toml: Path, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run("config", "set", "github.timeout", "999999", "--project", str(project)) == 1
    err = capsys.readouterr().err
    assert "not written" in err and "'github' invalid" in err
    assert f"{global_toml}:4: github.timeout:" in err
    assert "300000" in err
    assert global_toml.read_text() == GLOBAL_TOML
    assert run("config", "set", "docs.url", "ftp://nope", "--project", str(project)) == 1
    assert "docs.url" in capsys.readouterr().err
    assert global_toml.read_text() == GLOBAL_TOML


def test_project_definition_wins_and_global_one_is_mentioned(
    global_toml: Path, project_yaml: Path, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run("mcp", "disable", "github", "--project", str(project)) == 0
    captured = capsys.readouterr()
    assert f"{project_yaml}: disabled github" in captured.out
    assert f"'github' is also defined in {global_toml}" in captured.err
    assert changed_lines(PROJECT_YAML, project_yaml.read_text()) == ["+    enabled: false"]
    assert global_toml.read_text() == GLOBAL_TOML
    # --scope global edits the global definition instead
    assert run("mcp", "disable", "github", "--scope", "global", "--project", str(project)) == 0
    assert changed_lines(GLOBAL_TOML, global_toml.read_text()) == ["+enabled = false"]
    assert run("mcp", "enable", "github", "--project", str(project)) == 0
    assert "enabled: true" in project_yaml.read_text()


def test_unset_several_keys_and_report_missing_ones(
    global_toml: Path, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run("config", "unset", "github.timeout", "github.cwd", "--project", str(project)) == 0
    assert "github: unset timeout (cwd was not set)" in capsys.readouterr().out
    assert changed_lines(GLOBAL_TOML, global_toml.read_text()) == ["-timeout = 10000"]


def test_unset_keys_of_several_servers_at_once(
    global_toml: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run("config", "set", "docs.timeout", "5000") == 0
    assert run("config", "unset", "github.timeout", "docs.timeout") == 0
    out = capsys.readouterr().out
    assert "github: unset timeout" in out and "docs: unset timeout" in out
    assert changed_lines(GLOBAL_TOML, global_toml.read_text()) == ["-timeout = 10000"]
    # Removing a key a server cannot do without is refused, for each server, file intact.
    before = global_toml.read_text()
    assert run("config", "unset", "github.command", "docs.url") == 1
    assert global_toml.read_text() == before


def test_remove_and_rename(
    global_toml: Path, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run("mcp", "rename", "docs", "team-docs", "--project", str(project)) == 0
    assert changed_lines(GLOBAL_TOML, global_toml.read_text()) == [
        "-[mcp.docs]",
        "+[mcp.team-docs]",
    ]
    assert run("mcp", "rename", "team-docs", "bad.name", "--project", str(project)) == 1
    assert "contains a dot" in capsys.readouterr().err
    assert run("mcp", "remove", "github", "--project", str(project)) == 0
    assert (
        global_toml.read_text()
        == '# my global servers\n[mcp.team-docs]\nurl = "https://docs.example.com/mcp"\n'
    )
    assert run("mcp", "remove", "github", "--project", str(project)) == 1
    assert "no server named 'github' in any config file" in capsys.readouterr().err


def test_explicit_file_and_ambiguous_definitions(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    toml = paths.project_toml(project)
    yaml = paths.project_yaml(project)
    toml.write_text('[mcp.twice]\nurl = "https://a"\n')
    yaml.write_text("mcp_servers:\n  twice:\n    url: https://b\n")
    assert run("mcp", "disable", "twice", "--project", str(project)) == 1
    err = capsys.readouterr().err
    assert "defined in both" in err and "--file" in err
    assert run("mcp", "disable", "twice", "--file", str(yaml), "--project", str(project)) == 0
    assert "enabled: false" in yaml.read_text()
    assert "enabled" not in toml.read_text()


def test_a_file_that_does_not_parse_is_reported_not_touched(
    global_toml: Path, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = "[mcp.github\ncommand = 1\n"
    global_toml.write_text(broken)
    assert (
        run(
            "config",
            "set",
            "github.timeout",
            "1",
            "--file",
            str(global_toml),
            "--project",
            str(project),
        )
        == 1
    )
    err = capsys.readouterr().err
    assert str(global_toml) in err and "not valid TOML" in err
    assert global_toml.read_text() == broken


# -- conflicts -----------------------------------------------------------------------------


def test_a_conflicting_write_is_reloaded_and_retried_once(
    global_toml: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = []

    def someone_else_writes(doc: ConfigDocument) -> None:
        calls.append(doc)
        if len(calls) == 1:
            global_toml.write_text(GLOBAL_TOML.replace("# my global", "# their global"))

    def edit(doc: ConfigDocument) -> str:
        doc.set_enabled("docs", False)
        return "disabled docs"

    message = run_edit(
        global_toml, Scope.GLOBAL, edit, validate="docs", before_save=someone_else_writes
    )
    assert message == "disabled docs"
    assert len(calls) == 2
    text = global_toml.read_text()
    assert text.startswith("# their global servers")  # their change survived
    assert text.endswith('url = "https://docs.example.com/mcp"\nenabled = false\n')  # and ours
    assert "reloaded it and retrying" in capsys.readouterr().err


def test_a_second_conflict_is_reported(global_toml: Path, project: Path) -> None:
    counter = iter(range(100))

    def keeps_changing(doc: ConfigDocument) -> None:
        global_toml.write_text(GLOBAL_TOML + f"# edit {next(counter)}\n")

    def edit(doc: ConfigDocument) -> str:
        doc.set_enabled("docs", False)
        return "disabled docs"

    with pytest.raises(ConflictError) as caught:
        run_edit(global_toml, Scope.GLOBAL, edit, validate=None, before_save=keeps_changing)
    assert str(global_toml) in str(caught.value) and "retry" in str(caught.value)
    assert global_toml.read_text() == GLOBAL_TOML + "# edit 1\n"


def test_an_edit_that_changes_nothing_does_not_write(global_toml: Path) -> None:
    def edit(doc: ConfigDocument) -> str:
        doc.set("github", "timeout", 10000)
        return "github.timeout set"

    before = global_toml.stat().st_mtime_ns
    assert "file unchanged" in run_edit(global_toml, Scope.GLOBAL, edit, validate="github")
    assert global_toml.stat().st_mtime_ns == before


# -- targets -------------------------------------------------------------------------------


def test_choose_file_prefers_toml_unless_the_scope_uses_only_yaml(project: Path) -> None:
    toml, yaml = paths.project_toml(project), paths.project_yaml(project)
    assert choose_file(Scope.PROJECT, project) == toml  # nothing yet
    yaml.write_text("model: x\n")
    assert choose_file(Scope.PROJECT, project) == toml  # yaml without servers
    yaml.write_text("mcp_servers:\n  a:\n    url: https://a\n")
    assert choose_file(Scope.PROJECT, project) == yaml
    toml.write_text("# no servers yet\n")
    assert choose_file(Scope.PROJECT, project) == yaml
    toml.write_text('[mcp.b]\nurl = "https://b"\n')
    assert choose_file(Scope.PROJECT, project) == toml
    assert choose_file(Scope.GLOBAL, project) == paths.paths().global_toml


def test_defining_file_finds_invalid_servers_too(global_toml: Path, project: Path) -> None:
    assert defining_file("docs", project) == global_toml
    assert defining_file("nope", project) is None
    paths.project_toml(project).write_text("[mcp.docs]\ntimeout = -1\n")  # invalid entry
    assert defining_file("docs", project) == paths.project_toml(project)
    assert defining_files("docs", project) == [paths.project_toml(project), global_toml]


def test_defining_file_skips_what_the_loader_skips(global_toml: Path, project: Path) -> None:
    from portico.config.load import load

    for text in ("version = 99\n[mcp.docs]\nurl = 'https://x'\n", "[mcp.docs\n"):
        paths.project_toml(project).write_text(text)  # a newer format; a broken file
        assert load(project).server("docs").source.path == global_toml
        assert defining_file("docs", project) == global_toml


def test_set_in_a_yaml_file_reads_yaml_values(project_yaml: Path, project: Path) -> None:
    assert run("config", "set", "github.args", "[-y, other-server]", "--project", str(project)) == 0
    assert run("config", "set", "github.env.TOKEN", "${keyring:gh}", "--project", str(project)) == 0
    assert run("config", "set", "github.timeout", "12.5", "--project", str(project)) == 0
    assert changed_lines(PROJECT_YAML, project_yaml.read_text()) == [
        "-    args: [-y, server-github]   # the project pins its own",
        "+    args: [-y, other-server]   # the project pins its own",
        "+    env:",
        '+      TOKEN: "${keyring:gh}"',
        "+    timeout: 12.5",
    ]
    spec = ConfigDocument.load(project_yaml).check(Scope.PROJECT).server("github")
    assert spec is not None and spec.args == ("-y", "other-server") and spec.timeout == 12.5
    assert spec.env_dict == {"TOKEN": "${keyring:gh}"}


def test_a_missing_file_is_reported(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nowhere" / "mcp.toml"
    assert run("mcp", "disable", "x", "--file", str(missing), "--project", str(project)) == 1
    assert f"{missing}: no such file" in capsys.readouterr().err
    assert not missing.exists()


def test_an_invalid_server_can_still_be_renamed_and_fixed(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = paths.project_toml(project)
    path.write_text('[mcp.old]\nurl = "https://a"\ntimeout = 0\n')  # already invalid
    assert run("mcp", "rename", "old", "new", "--project", str(project)) == 0
    assert run("config", "set", "new.timeout", "1000", "--project", str(project)) == 0
    assert path.read_text() == '[mcp.new]\nurl = "https://a"\ntimeout = 1000\n'
    capsys.readouterr()
