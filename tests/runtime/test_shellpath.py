"""The login shell's PATH: asked once, cached (in the process and on disk for a few
minutes), merged; commands found on it; asked again when a command is not on it."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

import pytest

from portico.runtime import shellpath, shellpath_store
from portico.runtime.errors import CommandNotFound

pytestmark = pytest.mark.slow  # talks to real servers or processes


@pytest.fixture(autouse=True)
def fresh_cache() -> None:
    shellpath.clear_cache()


def fake_shell(tmp_path: Path, body: str) -> Path:
    shell = tmp_path / "fakeshell"
    shell.write_text("#!/bin/sh\n" + body)
    shell.chmod(shell.stat().st_mode | stat.S_IXUSR)
    return shell


def test_login_path_comes_from_the_shell_and_is_cached(tmp_path: Path) -> None:
    counter = tmp_path / "calls"
    tools = tmp_path / "shell-tools"
    tools.mkdir()
    shell = fake_shell(
        tmp_path,
        f'echo x >> "{counter}"\necho "noise from a profile script"\n'
        f'PATH="{tools}:/usr/bin" ; eval "$2"\n',
    )
    env = {"SHELL": str(shell), "PATH": "/bin"}
    first = shellpath.login_path(environ=env)
    second = shellpath.login_path(environ=env)
    assert first == f"{tools}:/usr/bin:/bin"  # shell's PATH first, ours merged after
    assert second == first
    assert counter.read_text().count("x") == 1  # asked once


def counting_shell(tmp_path: Path, path_file: Path) -> tuple[Path, Path]:
    """A shell whose PATH is the content of ``path_file``; it counts how often it ran."""
    counter = tmp_path / "calls"
    shell = fake_shell(
        tmp_path, f'echo x >> "{counter}"\nPATH="$(cat "{path_file}")" ; eval "$2"\n'
    )
    return shell, counter


def asked(counter: Path) -> int:
    return counter.read_text().count("x") if counter.exists() else 0


def test_the_next_process_reuses_the_path_from_the_disk(tmp_path: Path) -> None:
    path_file = tmp_path / "shell-path"
    path_file.write_text("/from/the/shell")
    shell, counter = counting_shell(tmp_path, path_file)
    env = {"SHELL": str(shell), "PATH": "/bin", "HOME": str(tmp_path)}
    assert shellpath.login_path(environ=env) == "/from/the/shell:/bin"
    shellpath.clear_cache()  # another `portico` process
    assert shellpath.login_path(environ=env) == "/from/the/shell:/bin"
    assert asked(counter) == 1
    assert "asked 0 min ago" in shellpath.path_origin(environ=env)
    assert (Path(os.environ["PORTICO_HOME"]) / "cache" / "login-path.json").is_file()


def test_an_edited_startup_file_or_an_old_entry_asks_the_shell_again(tmp_path: Path) -> None:
    path_file = tmp_path / "shell-path"
    path_file.write_text("/first")
    shell, counter = counting_shell(tmp_path, path_file)
    rc = tmp_path / ".bashrc"
    rc.write_text("# nothing yet\n")
    env = {"SHELL": str(shell), "PATH": "/bin", "HOME": str(tmp_path)}
    assert shellpath.login_path(environ=env) == "/first:/bin"
    path_file.write_text("/second")
    rc.write_text('export PATH="$HOME/.local/bin:$PATH"  # the person edits their rc\n')
    shellpath.clear_cache()
    assert shellpath.login_path(environ=env) == "/second:/bin"
    assert asked(counter) == 2
    # An entry older than MAX_AGE is not used either.
    store = Path(os.environ["PORTICO_HOME"]) / "cache" / "login-path.json"
    key = shellpath_store.fingerprint(str(shell), env)
    shellpath_store.remember(store, key, "/stale", now=time.time() - shellpath_store.MAX_AGE - 1)
    shellpath.clear_cache()
    path_file.write_text("/third")
    assert shellpath.login_path(environ=env) == "/third:/bin"
    assert asked(counter) == 3


def test_a_shell_that_gave_no_path_is_asked_again_by_the_next_process(tmp_path: Path) -> None:
    counter = tmp_path / "calls"
    shell = fake_shell(tmp_path, f'echo x >> "{counter}"\nexit 1\n')
    env = {"SHELL": str(shell), "PATH": "/only/ours", "HOME": str(tmp_path)}
    assert shellpath.login_path(environ=env) == "/only/ours"
    shellpath.clear_cache()
    assert shellpath.login_path(environ=env) == "/only/ours"
    assert asked(counter) == 2


def test_hanging_shell_times_out_and_falls_back(tmp_path: Path) -> None:
    shell = fake_shell(tmp_path, "sleep 30\n")
    env = {"SHELL": str(shell), "PATH": "/only/ours"}
    assert shellpath.login_path(environ=env, timeout=0.5) == "/only/ours"


def test_missing_shell_falls_back(tmp_path: Path) -> None:
    env = {"SHELL": str(tmp_path / "no-such-shell"), "PATH": "/x:/y"}
    assert shellpath.login_path(environ=env) == "/x:/y"


def test_find_command_on_given_path(tmp_path: Path) -> None:
    tool = tmp_path / "bin" / "mytool"
    tool.parent.mkdir()
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    assert shellpath.find_command("mytool", f"/nowhere{os.pathsep}{tool.parent}") == str(tool)


def test_not_found_names_the_path_searched() -> None:
    with pytest.raises(CommandNotFound) as caught:
        shellpath.find_command("npx-missing-xyz", "/a/bin:/b/bin", server="github")
    message = str(caught.value)
    assert "github" in message and "npx-missing-xyz" in message and "PATH=/a/bin:/b/bin" in message


def test_relative_command_resolves_against_cwd(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    assert shellpath.find_command("./run.sh", "/usr/bin", cwd=str(tmp_path)) == str(
        tmp_path / "./run.sh"
    )
    with pytest.raises(CommandNotFound, match="not executable"):
        shellpath.find_command("./missing.sh", "/usr/bin", cwd=str(tmp_path))


async def test_connection_finds_command_on_login_shell_path(tmp_path: Path) -> None:
    from portico.runtime.connection import Connection
    from portico.runtime.events import EventBus, Status
    from portico.runtime.hooks import ConnectionHooks

    from .conftest import make_spec

    shell_bin = tmp_path / "only-in-login-shell"
    shell_bin.mkdir()
    server = shell_bin / "my-mcp-server"
    server.write_text('#!/bin/sh\necho "started with PATH=$PATH" >&2\nexit 5\n')
    server.chmod(0o755)
    shell = fake_shell(tmp_path, f'PATH="{shell_bin}:/usr/bin:/bin" ; eval "$2"\n')
    hooks = ConnectionHooks(environ={"SHELL": str(shell), "PATH": "/usr/bin:/bin"})
    conn = Connection(make_spec("gui", command="my-mcp-server"), bus=EventBus(), hooks=hooks)
    await conn.start()
    try:
        state = await conn.wait_settled(20)
        assert state.status is Status.COOLDOWN
        assert "server exited (code 5)" in (state.error or "")
        assert f"started with PATH={shell_bin}:" in (state.error or "")
    finally:
        await conn.stop()


async def test_a_command_installed_since_the_path_was_remembered_is_found(
    tmp_path: Path,
) -> None:
    """nvm, a new toolchain: the shell's PATH changed without an edit Portico can see. The
    remembered PATH lacks the command, so the connection asks the shell again."""
    from portico.runtime.connection import Connection
    from portico.runtime.events import EventBus, Status
    from portico.runtime.hooks import ConnectionHooks

    from .conftest import make_spec

    path_file = tmp_path / "shell-path"
    path_file.write_text("/usr/bin:/bin")
    shell, counter = counting_shell(tmp_path, path_file)
    environ = {"SHELL": str(shell), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    assert shellpath.login_path(environ=environ) == "/usr/bin:/bin"
    shellpath.clear_cache()  # the next process starts with the remembered PATH
    new_bin = tmp_path / "installed-later"
    new_bin.mkdir()
    server = new_bin / "my-mcp-server"
    server.write_text('#!/bin/sh\necho "started with PATH=$PATH" >&2\nexit 5\n')
    server.chmod(0o755)
    path_file.write_text(f"{new_bin}:/usr/bin:/bin")
    hooks = ConnectionHooks(environ=environ)
    conn = Connection(make_spec("gui", command="my-mcp-server"), bus=EventBus(), hooks=hooks)
    await conn.start()
    try:
        state = await conn.wait_settled(20)
        assert state.status is Status.COOLDOWN
        assert f"started with PATH={new_bin}:" in (state.error or "")
    finally:
        await conn.stop()
    assert asked(counter) == 2
    # A command that is on no PATH still fails, after asking once more, not in a loop.
    assert not shellpath.relearn(environ=environ)


def test_a_hanging_shell_leaves_no_process_and_the_error_says_so(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    # A profile that starts a long-lived child and then hangs itself.
    shell = fake_shell(tmp_path, f'sleep 300 &\necho $! > "{pid_file}"\nsleep 300\n')
    env = {"SHELL": str(shell), "PATH": "/only/ours"}
    assert shellpath.login_path(environ=env, timeout=0.5) == "/only/ours"
    child = int(pid_file.read_text())
    assert _dies_soon(child)  # killed with the shell's process group
    origin = shellpath.path_origin(environ=env)
    assert "Portico's own PATH" in origin and "gave no PATH within 0.5 s" in origin
    with pytest.raises(CommandNotFound) as caught:
        shellpath.find_command("npx-missing-xyz", "/only/ours", server="gh", origin=origin)
    message = str(caught.value)
    assert "merged" not in message and str(shell) in message and "\n" not in message


def _dies_soon(pid: int, within: float = 3.0) -> bool:
    """SIGKILL is delivered asynchronously: give the kernel a moment to end the process."""
    deadline = time.monotonic() + within
    while _alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def _alive(pid: int) -> bool:
    """Running (a zombie waiting for init to reap it is not)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "State:\tZ" not in status
