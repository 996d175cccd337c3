"""What a command brings into its sandbox: its install, never the home or ~/.local whole."""

from __future__ import annotations

from pathlib import Path

from portico.runtime.sandbox.installs import install_needs


def test_a_prefix_a_script_root_and_the_caches(tmp_path: Path) -> None:
    home = tmp_path / "home"
    venv = tmp_path / "venv" / "bin"
    venv.mkdir(parents=True)
    (venv / "python").write_text("")
    script = tmp_path / "peers" / "node_modules" / "@x" / "srv" / "dist" / "index.js"
    script.parent.mkdir(parents=True)
    script.write_text("")
    needs = install_needs(str(venv / "python"), [str(script)], cwd=None, env={}, home=str(home))
    assert needs.read == (str(tmp_path / "venv"), str(tmp_path / "peers" / "node_modules"))
    assert needs.write == ()
    npx = install_needs("/usr/bin/npx", ["-y", "pkg"], cwd=None, env={}, home=str(home))
    assert "/usr" in npx.read  # /usr/bin/npx; its realpath may add npm's own folder
    assert npx.write == (str(home / ".npm"),)
    uvx = install_needs("/usr/bin/uvx", [], cwd=None, env={"UV_CACHE_DIR": "/c"}, home=str(home))
    assert uvx.write == ("/c", str(home / ".local" / "share" / "uv"))


def test_the_home_and_its_local_prefix_are_never_bound_whole(tmp_path: Path) -> None:
    home = tmp_path / "home"
    local_bin = home / ".local" / "bin"
    local_bin.mkdir(parents=True)
    (local_bin / "tool").write_text("")
    (home / "server.py").write_text("")
    needs = install_needs(
        str(local_bin / "tool"), ["server.py"], cwd=str(home), env={}, home=str(home)
    )
    local = home / ".local"
    assert needs.read == (str(local / "bin"), str(local / "lib"), str(home / "server.py"))
    assert str(home) not in needs.read and str(local) not in needs.read


def test_a_version_manager_shim_brings_its_whole_manager(tmp_path: Path) -> None:
    home = tmp_path / "home"
    shim = home / ".pyenv" / "shims" / "python3"
    shim.parent.mkdir(parents=True)
    shim.write_text("#!/bin/sh\n")
    needs = install_needs(str(shim), [], cwd=None, env={}, home=str(home))
    assert needs.read == (str(home / ".pyenv"),)  # the shim runs pyenv's libexec
