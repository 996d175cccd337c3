"""The macOS sandbox-exec profile, checked for its content (it is launched only on
darwin): deny by default, the system and the given paths readable, only the write paths
and devices writable, the network only to the proxy's port, every path quoted."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from portico.runtime.sandbox.seatbelt import SANDBOX_EXEC, seatbelt_argv, seatbelt_profile


def _rules(profile: str, verb: str) -> list[str]:
    return [line for line in profile.splitlines() if line.startswith(f"(allow {verb}")]


def test_deny_by_default_and_reads_only_what_it_is_given() -> None:
    profile = seatbelt_profile(["/Users/me/proj", "/Users/me/proj"], ["/private/tmp/p-1"])
    lines = profile.splitlines()
    assert lines[:2] == ["(version 1)", "(deny default)"]
    reads = _rules(profile, "file-read*")
    assert '(allow file-read* (subpath "/Users/me/proj"))' in reads  # once
    assert any('(subpath "/System")' in r and '(subpath "/usr")' in r for r in reads)
    assert not any('"/Users"' in r or '"/Users/me"' in r for r in reads)  # not the home
    writes = [line for line in lines if "file-write*" in line]
    assert writes == [
        '(allow file-write* (literal "/dev/null") (literal "/dev/zero") (literal "/dev/tty")'
        ' (literal "/dev/dtracehelper"))',
        '(allow file-read* file-write* (subpath "/private/tmp/p-1"))',
    ]


def test_no_network_without_a_proxy_and_only_the_proxy_with_one() -> None:
    assert "network" not in seatbelt_profile(["/p"], [])
    profile = seatbelt_profile(["/p"], [], proxy_port=3128)
    assert [line for line in profile.splitlines() if "network" in line] == [
        '(allow network-outbound (remote ip "localhost:3128"))'
    ]
    with pytest.raises(ValueError, match="not a port"):
        seatbelt_profile([], [], proxy_port=70000)


def test_paths_are_quoted_and_bad_ones_refused() -> None:
    profile = seatbelt_profile(['/Users/me/a "b"\\c'], [])
    assert '(subpath "/Users/me/a \\"b\\"\\\\c")' in profile
    with pytest.raises(ValueError, match="not an absolute path"):
        seatbelt_profile(["relative/dir"], [])
    with pytest.raises(ValueError, match="control character"):
        seatbelt_profile(["/p\n(allow default)"], [])


def test_the_argv_hands_the_profile_to_sandbox_exec() -> None:
    assert seatbelt_argv("(version 1)\n", ["node", "x.js"]) == [
        SANDBOX_EXEC,
        "-p",
        "(version 1)\n",
        "node",
        "x.js",
    ]


def test_the_macos_launch_runs_the_command_under_the_generated_profile(
    tmp_path: Path, project: Path
) -> None:
    """What the factory runs on darwin: sandbox-exec -p PROFILE CMD, the profile naming
    the project read-only, the private home/tmp and the server's own npm cache writable,
    the proxy's port only; the person's home nowhere; HOME and the cache pointed there."""
    from portico.runtime.sandbox.launch import seatbelt_launch
    from tests.runtime.sandbox.targets import prying

    home = tmp_path / "person"
    home.mkdir()
    node = tmp_path / "node" / "bin" / "npx"
    node.parent.mkdir(parents=True)
    node.write_text("")
    private = tmp_path / "private"
    private.mkdir()
    argv, env = seatbelt_launch(
        prying(project),
        str(node),
        ["-y", "pkg"],
        cwd=str(project),
        env={},
        home=str(home),
        private=str(private),
        proxy_port=41234,
    )
    assert argv[:2] == [SANDBOX_EXEC, "-p"]
    assert argv[3:] == [str(node), "-y", "pkg"]
    profile = argv[2]
    real = os.path.realpath
    assert f'(allow file-read* (subpath "{real(tmp_path / "node")}")' in profile
    assert f'(subpath "{real(project)}")' in profile
    writable = next(
        line for line in profile.splitlines() if "file-write*" in line and "subpath" in line
    )
    assert f'(subpath "{real(private)}")' in writable
    assert f'"{real(project)}"' not in writable  # the project stays read-only
    assert f'"{real(home)}"' not in profile  # nothing of the person's home
    assert '(allow network-outbound (remote ip "localhost:41234"))' in profile
    assert env["HOME"] == str(private / "home")
    assert env["npm_config_cache"] in writable
    assert not env["npm_config_cache"].startswith(str(home))


def test_the_loaders_variables_are_set_under_the_profile_not_before_it(
    tmp_path: Path, project: Path
) -> None:
    """DYLD_* and LD_* reach the server through /usr/bin/env run under the profile;
    sandbox-exec itself never gets them (tests/security/test_attack_loader_env.py)."""
    from portico.runtime.sandbox.launch import seatbelt_launch
    from tests.runtime.sandbox.targets import prying

    private = tmp_path / "private"
    private.mkdir()
    argv, _env = seatbelt_launch(
        prying(project),
        "/usr/local/bin/server",
        ["--x"],
        cwd=str(project),
        env={},
        home=str(tmp_path),
        private=str(private),
        proxy_port=None,
        late={"DYLD_INSERT_LIBRARIES": "/p/lib.dylib"},
    )
    assert argv[3:] == [
        "/usr/bin/env",
        "DYLD_INSERT_LIBRARIES=/p/lib.dylib",
        "/usr/local/bin/server",
        "--x",
    ]
