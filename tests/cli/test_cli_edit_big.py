"""Edit commands on big config files (where an edit parses only the edited server's lines)
write and say exactly what they write when the whole file is parsed, and refuse the same.

Each command runs twice, in two homes holding the same files: once as shipped (big files
take the fast path: one fast parse of the whole file, a round-trip parse of the edited
server's lines) and once with that path switched off. Output, exit code and every byte
of both files must agree after every command.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from portico.cli.main import main
from portico.config import document, parse_count

pytestmark = pytest.mark.slow  # each test runs every command twice, in-process

SERVERS = 60


def big_toml(servers: int = SERVERS) -> str:
    out = ["# my servers\nversion = 1\n"]
    for i in range(servers):
        out.append(
            f'\n# server {i}\n[mcp.t{i}]\ncommand = ["npx", "-y", "pkg-{i}"]  # launcher\n'
            f'environment = {{ A = "x" }}\ntimeout = 30000\n'
        )
        if i % 7 == 3:
            out.append(f"[mcp.t{i}.sampling]\nmax_rpm = 5  # per minute\n")
    return "".join(out)


def big_yaml(servers: int = SERVERS) -> str:
    out = ["# yaml servers\ndefer_tools: true\nmcp_servers:\n"]
    for i in range(servers):
        if i % 5 == 2:
            out.append(f"  y{i}: {{command: uvx, args: [pkg-{i}]}}   # flow\n")
            continue
        out.append(
            f"  # server {i}\n  y{i}:\n    command: npx\n    args:\n      - -y\n"
            f"      - pkg-{i}   # the package\n    env:\n      A: x\n    timeout: 30\n\n"
        )
    out.append("# below the servers\napprovals:\n  mode: ask\n")
    return "".join(out)


def _homes(tmp_path: Path, toml: str, yaml: str) -> tuple[Path, Path]:
    homes = tmp_path / "fast", tmp_path / "whole"
    for home in homes:
        config = home / "config"
        config.mkdir(parents=True)
        (config / "mcp.toml").write_text(toml)
        (config / "config.yaml").write_text(yaml)
    return homes


def _run(
    home: Path, argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> tuple[int, str, str]:
    monkeypatch.setenv("PORTICO_HOME", str(home))
    code = main([arg.replace("{config}", str(home / "config")) for arg in argv])
    out, err = capsys.readouterr()
    return code, out.replace(str(home), "HOME"), err.replace(str(home), "HOME")


def _both(
    homes: tuple[Path, Path],
    argv: list[str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> tuple[int, str, str]:
    """``argv`` in both homes: the same exit code, output and files; (code, out, err)."""
    fast, whole = homes
    got = _run(fast, argv, monkeypatch, capsys)
    with monkeypatch.context() as patched:
        patched.setattr(document, "SPANS_FROM_CHARS", 1 << 40)
        want = _run(whole, argv, monkeypatch, capsys)
    assert got == want, argv
    for name in ("mcp.toml", "config.yaml"):
        assert (fast / "config" / name).read_bytes() == (whole / "config" / name).read_bytes()
    return got


COMMANDS = [
    ["config", "set", "t0.timeout", "5000"],
    ["config", "set", "y7.env.TOKEN", "abc #def"],
    ["config", "set", "y7.env.PIN", "0123"],
    ["config", "set", "t10.environment.V", "1.10"],
    ["config", "set", "t3.sampling.max_rpm", "9"],
    ["config", "set", "y2.timeout", "12"],  # a flow map over one line
    ["config", "set", "y2.env.K", "v"],
    ["config", "set", "y59.cwd", "/srv/x"],  # the last server, above another section
    ["config", "set", "t59.timeout", "7000"],
    ["config", "set", "y8.timeout", "soon"],  # refused: not a duration
    ["config", "set", "t8.url", "https://example.com/mcp"],  # a warning: both kinds
    ["config", "unset", "y7.env.A", "t0.timeout"],
    ["mcp", "disable", "t1"],
    ["mcp", "disable", "y1"],
    ["mcp", "enable", "y1"],
    ["mcp", "disable", "y1"],  # already so: nothing written
    ["mcp", "add", "new-one", "--", "npx", "-y", "pkg"],
    ["mcp", "add", "new-two", "--url", "https://example.com/mcp", "--file", "{config}/config.yaml"],
    ["mcp", "add", "broken", "--url", "notaurl"],  # refused
    ["config", "set", "new-two.timeout", "9"],
    ["mcp", "remove", "y4"],
    ["mcp", "rename", "t4", "t4-renamed"],
    ["config", "set", "t4-renamed.timeout", "1000"],
    ["mcp", "remove", "nobody"],
]


def test_every_edit_command_writes_what_the_whole_file_path_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    toml, yaml = big_toml(), big_yaml()
    assert min(len(toml), len(yaml)) >= document.SPANS_FROM_CHARS  # the fast path is taken
    homes = _homes(tmp_path, toml, yaml)
    codes = [_both(homes, argv, monkeypatch, capsys)[0] for argv in COMMANDS]
    refused = [" ".join(argv) for argv, code in zip(COMMANDS, codes, strict=True) if code]
    assert refused == [
        "config set y8.timeout soon",
        "mcp add broken --url notaurl",
        "mcp remove nobody",
    ]


def test_an_edit_of_a_big_file_parses_it_once_and_then_only_the_servers_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    homes = _homes(tmp_path, big_toml(), big_yaml())
    for argv, name in (
        (["config", "set", "y7.timeout", "5"], "config.yaml"),
        (["mcp", "disable", "t7"], "mcp.toml"),
        (["mcp", "add", "n", "--", "npx"], "mcp.toml"),
    ):
        parse_count.reset()
        _both(homes, argv, monkeypatch, capsys)
        full = {
            Path(p).parent.parent.name + "/" + Path(p).name: n
            for p, n in parse_count.PARSES.items()
        }
        # once in each home: the fast check of the whole file; the whole round-trip parse
        assert full == {f"fast/{name}": 1, f"whole/{name}": 1}
    monkeypatch.setenv("PORTICO_HOME", str(homes[0]))
    parse_count.reset()
    assert main(["config", "set", "y9.timeout", "6"]) == 0
    assert {Path(p).name: n for p, n in parse_count.PARSES.items()} == {"config.yaml": 1}
    assert {Path(p).name: n for p, n in parse_count.SPANS.items()} == {"config.yaml": 1}


@pytest.mark.parametrize(
    ("name", "broken", "expected"),
    [
        ("config.yaml", ("  y50:\n", "  y50:\n    - bad: [\n"), "config.yaml:"),
        ("config.yaml", ("  y50:\n", "  y50:\n  y50:\n"), "duplicate key"),
        ("mcp.toml", ("[mcp.t50]\n", "[mcp.t50]\ncommand = [\n"), "mcp.toml:"),
        ("mcp.toml", ("version = 1\n", "version = 99\n"), "newer than this build"),
    ],
)
def test_a_big_file_that_does_not_parse_is_refused_with_the_same_message(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    name: str,
    broken: tuple[str, str],
    expected: str,
) -> None:
    toml, yaml = big_toml(), big_yaml()
    if name == "mcp.toml":
        toml = toml.replace(*broken, 1)
    else:
        yaml = yaml.replace(*broken, 1)
    homes = _homes(tmp_path, toml, yaml)
    server = "t3" if name == "mcp.toml" else "y3"
    code, _out, err = _both(homes, ["config", "set", f"{server}.timeout", "5"], monkeypatch, capsys)
    assert code == 1
    assert expected in err
    assert (homes[0] / "config" / name).read_text() == (toml if name == "mcp.toml" else yaml)
