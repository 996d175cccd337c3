"""Scopes and files: which server wins, conflicts, versions, unreadable files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from portico import paths
from portico.config import Scope, keep_previous, load, load_files, parse_text
from portico.config.model import Dialect


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_load_reads_global_and_project_files_of_both_dialects(project: Path) -> None:
    p = paths.paths()
    write(p.global_toml, '[mcp.a]\ncommand = ["a"]\n')
    write(p.global_yaml, "mcp_servers:\n  b:\n    command: b\n")
    write(paths.project_toml(project), '[mcp.c]\ncommand = ["c"]\n')
    write(paths.project_yaml(project), "mcp_servers:\n  d:\n    url: https://d.example.com\n")
    config = load(project)
    assert config.diagnostics == ()
    assert [(s.name, s.source.scope, s.source.dialect) for s in config.servers] == [
        ("a", Scope.GLOBAL, Dialect.TOML),
        ("b", Scope.GLOBAL, Dialect.YAML),
        ("c", Scope.PROJECT, Dialect.TOML),
        ("d", Scope.PROJECT, Dialect.YAML),
    ]
    assert config.files == (
        p.global_toml,
        p.global_yaml,
        paths.project_toml(project),
        paths.project_yaml(project),
    )
    assert config.project == project


def test_load_without_project_reads_only_global(project: Path) -> None:
    write(paths.paths().global_toml, '[mcp.a]\ncommand = ["a"]\n')
    write(paths.project_toml(project), '[mcp.c]\ncommand = ["c"]\n')
    assert [s.name for s in load().servers] == ["a"]


def test_no_files_is_an_empty_config(project: Path) -> None:
    config = load(project)
    assert config.servers == () and config.diagnostics == () and config.files == ()


def test_project_server_replaces_global_server_by_name(project: Path) -> None:
    g = write(
        paths.paths().global_toml,
        '[mcp.fs]\ncommand = ["global-fs"]\ntimeout = 5000\n\n[mcp.other]\ncommand = ["o"]\n',
    )
    pfile = write(paths.project_yaml(project), "mcp_servers:\n  fs:\n    command: project-fs\n")
    config = load(project)
    assert config.diagnostics == ()
    assert [s.name for s in config.servers] == ["other", "fs"]
    fs = config.server("fs")
    assert fs is not None
    assert fs.command == "project-fs"
    assert fs.timeout == 30.0  # whole entry replaced: nothing inherited from the global one
    assert (fs.source.path, fs.source.line, fs.source.scope) == (pfile, 2, Scope.PROJECT)
    assert config.server("other").source.path == g  # type: ignore[union-attr]


def test_same_name_in_both_files_of_one_scope_is_an_error_and_neither_starts(
    project: Path,
) -> None:
    toml = write(
        paths.project_toml(project), '[mcp.keep]\ncommand = ["k"]\n\n[mcp.dup]\ncommand = ["one"]\n'
    )
    yaml = write(
        paths.project_yaml(project), "mcp_servers:\n  dup:\n    url: https://two.example.com\n"
    )
    write(paths.paths().global_toml, '[mcp.dup]\ncommand = ["global"]\n')
    config = load(project)
    both = f"{toml}:4 and {yaml}:2"
    assert [str(d) for d in config.errors] == [
        f"{toml}:4: dup: is defined in both {both} (project scope); neither starts: remove or "
        "rename one of them",
        f"{yaml}:2: dup: is defined in both {both} (project scope); neither starts: remove or "
        "rename one of them",
    ]
    assert [s.name for s in config.servers] == ["keep"]  # not even the global "dup"


def test_same_name_in_both_global_files(project: Path) -> None:
    p = paths.paths()
    write(p.global_toml, '[mcp.dup]\ncommand = ["one"]\n')
    write(p.global_yaml, "mcp_servers:\n  dup:\n    command: two\n  solo:\n    command: s\n")
    config = load(project)
    assert len(config.errors) == 2
    assert "(global scope)" in config.errors[0].message
    assert [s.name for s in config.servers] == ["solo"]


def test_a_broken_project_entry_still_shadows_the_global_one(project: Path) -> None:
    g = write(paths.paths().global_toml, '[mcp.fs]\ncommand = ["global-fs"]\n')
    write(paths.project_toml(project), '[mcp.fs]\ncommand = ["p"]\ntimeout = -1\n')
    config = load(project)
    assert config.servers == ()
    assert [str(d) for d in config.warnings] == [
        f"{g}:1: fs: warning: is not started: the project defines a server of the same name "
        "(which replaces this one) and that entry has errors"
    ]


def test_newer_version_starts_no_server_of_that_file(project: Path) -> None:
    newer = write(
        paths.paths().global_toml, 'version = 2\ndefer_tools = 99\n\n[mcp.a]\ncommand = ["a"]\n'
    )
    write(paths.project_yaml(project), "mcp_servers:\n  b:\n    command: b\n")
    config = load(project)
    assert [str(d) for d in config.errors] == [
        f"{newer}:1: version: 2 is newer than this build of Portico reads (version 1): no "
        "server in this file starts; update Portico or rewrite the file for version 1"
    ]
    assert [s.name for s in config.servers] == ["b"]


def test_invalid_version(tmp_path: Path) -> None:
    path = write(tmp_path / "mcp.toml", 'version = "one"\n[mcp.a]\ncommand = ["a"]\n')
    config = load_files([(path, Scope.GLOBAL)])
    assert [str(d) for d in config.errors] == [
        f"{path}:1: version: 'one' is not a valid version: write version = 1; no server in "
        "this file starts until it is fixed"
    ]
    assert config.servers == ()


def test_version_1_and_absent_are_fine(tmp_path: Path) -> None:
    one = write(tmp_path / "one" / "mcp.toml", 'version = 1\n[mcp.a]\ncommand = ["a"]\n')
    absent = write(tmp_path / "two" / "mcp.toml", '[mcp.b]\ncommand = ["b"]\n')
    config = load_files([(one, Scope.GLOBAL), (absent, Scope.PROJECT)])
    assert config.diagnostics == ()
    assert [s.name for s in config.servers] == ["a", "b"]


def test_toml_syntax_error_has_line_and_column(project: Path) -> None:
    bad = write(paths.paths().global_toml, '[mcp.a]\ncommand = ["a"]\ntimeout = \n')
    write(paths.project_yaml(project), "mcp_servers:\n  b:\n    command: b\n")
    config = load(project)
    assert [str(d) for d in config.errors] == [
        f"{bad}:3:11: not valid TOML: unexpected end of line; fix the file (the servers "
        "it defined keep their previous settings until it parses)"
    ]
    assert (config.errors[0].line, config.errors[0].column) == (3, 11)
    assert [s.name for s in config.servers] == ["b"]  # the other file still loads
    assert config.unparsed == (bad,)


def test_toml_duplicate_server_is_a_syntax_error(tmp_path: Path) -> None:
    path = write(tmp_path / "mcp.toml", '[mcp.a]\ncommand = ["a"]\n\n[mcp.a]\nurl = "x"\n')
    config = load_files([(path, Scope.GLOBAL)])
    assert str(config.errors[0]).startswith(f'{path}:4:1: not valid TOML: Key "a" already exists')


def test_yaml_syntax_error_has_line_and_column(project: Path) -> None:
    bad = write(
        paths.project_yaml(project), "mcp_servers:\n  a:\n    command: x\n    args: [unclosed\n"
    )
    config = load(project)
    (error,) = config.errors
    assert error.path == bad and error.line == 5 and error.column == 1
    assert error.message.startswith("not valid YAML: ")
    assert config.servers == ()


def test_yaml_duplicate_key_is_an_error(tmp_path: Path) -> None:
    path = write(
        tmp_path / "config.yaml", "mcp_servers:\n  a:\n    command: x\n  a:\n    command: y\n"
    )
    config = load_files([(path, Scope.GLOBAL)])
    (error,) = config.errors
    assert error.line == 4
    assert 'duplicate key "a" (values not shown)' in error.message


def test_unreadable_and_non_utf8_files_are_diagnostics(tmp_path: Path) -> None:
    binary = tmp_path / "mcp.toml"
    binary.write_bytes(b'[mcp.a]\ncommand = ["\xff"]\n')
    directory = tmp_path / "config.yaml"
    directory.mkdir()
    config = load_files([(binary, Scope.GLOBAL), (directory, Scope.GLOBAL)])
    assert [str(d) for d in config.errors] == [
        f"{binary}:2:13: is not UTF-8 text: save it as UTF-8",
        f"{directory}: cannot be read: Is a directory",
    ]
    assert config.unparsed == (binary, directory)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_permission_denied_is_a_diagnostic(tmp_path: Path) -> None:
    path = write(tmp_path / "mcp.toml", '[mcp.a]\ncommand = ["a"]\n')
    path.chmod(0)
    config = load_files([(path, Scope.GLOBAL)])
    assert str(config.errors[0]) == f"{path}: cannot be read: Permission denied"


def test_keep_previous_servers_of_a_file_that_stopped_parsing(tmp_path: Path) -> None:
    toml = write(tmp_path / "mcp.toml", '[mcp.a]\ncommand = ["a"]\n')
    yaml = write(tmp_path / "config.yaml", "mcp_servers:\n  b:\n    command: b\n")
    files = [(toml, Scope.GLOBAL), (yaml, Scope.GLOBAL)]
    good = load_files(files)
    toml.write_text('[mcp.a]\ncommand = ["a"\n')  # half-typed edit
    yaml.write_text("mcp_servers:\n  b:\n    command: b2\n")
    broken = load_files(files)
    assert [s.name for s in broken.servers] == ["b"]
    merged = keep_previous(broken, good)
    assert [(s.name, s.command) for s in merged.servers] == [("b", "b2"), ("a", "a")]
    assert merged.errors == broken.errors  # the syntax error is still reported
    assert keep_previous(good, broken) is good


def test_settings_project_replaces_global(project: Path) -> None:
    write(paths.paths().global_toml, "defer_tools = 5\n")
    write(paths.paths().global_yaml, "mcp:\n  discovery_concurrency: 2\nprofile: home\n")
    write(paths.project_yaml(project), "mcp:\n  defer_tools: 30\nprofile: work\n")
    s = load(project).settings
    assert (s.defer_tools, s.discovery_concurrency, s.profile) == (30, 2, "work")


def test_setting_in_both_files_of_one_scope_warns_and_uses_the_first(project: Path) -> None:
    toml = write(paths.paths().global_toml, "defer_tools = 5\n")
    yaml = write(paths.paths().global_yaml, "mcp:\n  defer_tools: 7\n")
    config = load(project)
    assert [str(d) for d in config.diagnostics] == [
        f"{yaml}:2: defer_tools: warning: is also set to 5 in {toml}:1; that value is used: "
        "set it in one file only"
    ]
    assert config.settings.defer_tools == 5


def test_parse_text_checks_text_without_a_file(tmp_path: Path) -> None:
    path = tmp_path / "never-written.yaml"
    config = parse_text("mcp_servers:\n  a:\n    command: x\n    timeout: 301\n", path)
    assert [str(d) for d in config.errors] == [
        f"{path}:4: a.timeout: 301 is above the maximum 300 (seconds)"
    ]
    config = parse_text('[mcp.a]\ncommand = ["x"]\n', tmp_path / "x.toml", Scope.PROJECT)
    assert config.servers[0].source.scope is Scope.PROJECT
    assert not path.exists()


def test_empty_files_are_fine(tmp_path: Path) -> None:
    toml = write(tmp_path / "mcp.toml", "# nothing yet\n")
    yaml = write(tmp_path / "config.yaml", "# nothing yet\n")
    config = load_files([(toml, Scope.GLOBAL), (yaml, Scope.GLOBAL)])
    assert config.diagnostics == () and config.servers == ()


@pytest.mark.slow
def test_absurd_nesting_is_a_diagnostic_not_a_crash(tmp_path: Path) -> None:
    path = write(tmp_path / "config.yaml", "a: " + "[" * 3000 + "]" * 3000 + "\n")
    config = load_files([(path, Scope.GLOBAL)])
    assert [str(d) for d in config.errors] == [f"{path}:1: nests deeper than 64 levels: flatten it"]
