"""``roots`` for global servers, per server and as the top-level default, in both
dialects: absolute folders (``~`` allowed), errors and warnings with file:line, and a
project that may offer fewer folders, never others."""

from __future__ import annotations

from pathlib import Path

from portico.config import Scope, load_files
from portico.config.model import Config


def _load(*files: tuple[Path, str, Scope]) -> Config:
    for path, text, _scope in files:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return load_files([(path, scope) for path, _text, scope in files])


def _messages(config: Config) -> list[str]:
    return [str(d) for d in config.diagnostics]


def test_per_server_and_default_roots_in_toml(tmp_path: Path) -> None:
    src, notes = tmp_path / "src", tmp_path / "notes"
    src.mkdir()
    notes.mkdir()
    toml = tmp_path / "mcp.toml"
    config = _load(
        (
            toml,
            f'roots = ["{src}"]\n\n'
            '[mcp.plain]\ncommand = ["srv"]\n\n'
            f'[mcp.own]\ncommand = ["srv"]\nroots = ["{notes}", "~"]\n\n'
            '[mcp.none]\ncommand = ["srv"]\nroots = []\n',
            Scope.GLOBAL,
        )
    )
    assert _messages(config) == []
    assert config.settings.default_roots == (str(src),)
    roots = {s.name: s.roots for s in config.servers}
    assert roots == {"plain": (str(src),), "own": (str(notes), "~"), "none": ()}


def test_per_server_and_default_roots_in_yaml(tmp_path: Path) -> None:
    yaml = tmp_path / "config.yaml"
    config = _load(
        (
            yaml,
            "mcp:\n  roots: [~/src]\nmcp_servers:\n  plain:\n    command: srv\n"
            "  own:\n    command: srv\n    roots:\n      - /\n",
            Scope.GLOBAL,
        )
    )
    errors = [m for m in _messages(config) if "warning" not in m]
    assert errors == []
    assert {s.name: s.roots for s in config.servers} == {"plain": ("~/src",), "own": ("/",)}


def test_a_relative_root_is_an_error_naming_file_line_and_entry(tmp_path: Path) -> None:
    toml = tmp_path / "mcp.toml"
    config = _load(
        (
            toml,
            '[mcp.good]\ncommand = ["srv"]\n\n[mcp.bad]\ncommand = ["srv"]\n'
            'roots = ["/", "src/app"]\n',
            Scope.GLOBAL,
        )
    )
    assert [str(d) for d in config.errors] == [
        f"{toml}:6: bad.roots.1: 'src/app' is not an absolute folder: write the full path"
        " (a leading ~ is your home folder)"
    ]
    assert [s.name for s in config.servers] == ["good"]


def test_a_missing_folder_is_a_warning_and_the_server_runs(tmp_path: Path) -> None:
    toml = tmp_path / "mcp.toml"
    missing = tmp_path / "later"
    config = _load((toml, f'[mcp.srv]\ncommand = ["srv"]\nroots = ["{missing}"]\n', Scope.GLOBAL))
    assert _messages(config) == [
        f"{toml}:3: srv.roots.0: warning: folder {missing} does not exist; it is not offered"
        " until it does"
    ]
    assert config.servers[0].roots == (str(missing),)


def test_a_bad_top_level_roots_is_not_used(tmp_path: Path) -> None:
    toml = tmp_path / "mcp.toml"
    config = _load((toml, 'roots = "~/src"\n\n[mcp.srv]\ncommand = ["srv"]\n', Scope.GLOBAL))
    assert [str(d) for d in config.errors] == [
        f"{toml}:1: roots: must be a list of folder names, not '~/src'; it is not used"
    ]
    assert config.servers[0].roots == ()
    yaml = tmp_path / "config.yaml"
    config = _load((yaml, "mcp:\n  roots: [relative]\n", Scope.GLOBAL))
    assert [str(d) for d in config.errors] == [
        f"{yaml}:2: mcp.roots.0: 'relative' is not an absolute folder: write the full"
        " path (a leading ~ is your home folder); it is not used"
    ]


def test_a_project_may_offer_fewer_roots_never_others(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    home = tmp_path / "home" / "mcp.toml"
    project = tmp_path / "proj" / ".portico" / "mcp.toml"
    global_text = f'roots = ["{a}", "{b}"]\n\n[mcp.g]\ncommand = ["srv"]\n'
    fewer = _load(
        (home, global_text, Scope.GLOBAL),
        (project, f'roots = ["{a}"]\n', Scope.PROJECT),
    )
    assert _messages(fewer) == []
    assert fewer.server("g").roots == (str(a),)  # type: ignore[union-attr]

    other = _load(
        (home, global_text, Scope.GLOBAL),
        (project, 'roots = ["/"]\n\n[mcp.p]\ncommand = ["srv"]\nroots = ["/"]\n', Scope.PROJECT),
    )
    notes = _messages(other)
    assert any(m.startswith(f"{project}:1: ") and "ignored" in m for m in notes), notes
    assert other.server("g").roots == (str(a), str(b))  # type: ignore[union-attr]
    assert f"{project}:5: p.roots: warning: ignored: a project server is offered its project" in (
        " ".join(notes)
    )
    assert other.server("p").roots is None  # type: ignore[union-attr]
