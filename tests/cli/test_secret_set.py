"""``portico secret set NAME``: no echo on a terminal, stdin when piped, says where it
stored the value, and never says "Stored" for a value that would not survive a restart."""

from __future__ import annotations

import os
import pty
import select
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.attack import cli_env, global_yaml, portico

pytestmark = pytest.mark.slow  # talks to real servers or processes

FALLBACK = "secrets:\n  file_fallback: true\n"


def test_piped_value_persists_in_a_0600_file_and_says_where(portico_home: Path) -> None:
    global_yaml(portico_home, FALLBACK)
    run = portico(portico_home, "secret", "set", "API_KEY", stdin="s3cret-value\n")
    assert run.code == 0, run.text
    stored = portico_home / "state" / "secrets" / "API_KEY.json"
    assert f"Stored API_KEY in {stored} (mode 0600" in run.out
    assert "${keyring:API_KEY}" in run.out and "s3cret-value" not in run.text
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600
    again = portico(portico_home, "secret", "get", "API_KEY")  # another process
    assert again.code == 0 and again.out.strip() == "s3cret-value"
    gone = portico(portico_home, "secret", "delete", "API_KEY")
    assert gone.code == 0 and "Deleted API_KEY." in gone.out and not stored.exists()


def test_piped_multiline_value_is_kept_whole(portico_home: Path) -> None:
    global_yaml(portico_home, FALLBACK)
    pem = "-----BEGIN KEY-----\nabc\ndef\n-----END KEY-----"
    assert portico(portico_home, "secret", "set", "PEM", stdin=pem + "\n").code == 0
    assert portico(portico_home, "secret", "get", "PEM").out == pem + "\n"


def test_without_secure_keyring_or_fallback_it_refuses_with_the_fix(portico_home: Path) -> None:
    run = portico(portico_home, "secret", "set", "API_KEY", stdin="s3cret-value\n")
    assert run.code == 1 and "Stored" not in run.out, run.text
    (line,) = [ln for ln in run.err.splitlines() if ln.startswith("portico: ")]
    assert "cannot store secret 'API_KEY': no secure keyring" in line
    assert "add `secrets: {file_fallback: true}` to config.yaml" in line
    assert "s3cret-value" not in run.text
    assert not (portico_home / "state" / "secrets").exists()


def test_a_project_file_cannot_turn_the_file_fallback_on(portico_home: Path, project: Path) -> None:
    (project / ".portico" / "config.yaml").write_text(FALLBACK)
    run = portico(portico_home, "secret", "set", "API_KEY", cwd=project, stdin="v\n")
    assert run.code == 1 and "no secure keyring" in run.err
    assert f"{project / '.portico' / 'config.yaml'}:2" in run.err  # the ignored key, named
    assert not (portico_home / "state" / "secrets").exists()


def test_internal_names_are_refused(portico_home: Path) -> None:
    global_yaml(portico_home, FALLBACK)
    run = portico(portico_home, "secret", "set", "mcp-tokens/prot", stdin="forged\n")
    assert run.code == 2 and "not a secret name" in run.err and "no '/'" in run.err
    assert not (portico_home / "state" / "mcp-tokens").exists()


def test_terminal_input_is_not_echoed(portico_home: Path) -> None:
    global_yaml(portico_home, FALLBACK)
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "portico.cli.main", "secret", "set", "TTY_KEY"],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env=cli_env(portico_home),
        close_fds=True,
    )
    os.close(follower)
    seen = b""

    def read_until(marker: bytes, seconds: float = 30) -> None:
        nonlocal seen
        deadline = time.monotonic() + seconds
        while marker not in seen and time.monotonic() < deadline:
            ready, _, _ = select.select([leader], [], [], 0.2)
            if ready:
                try:
                    seen += os.read(leader, 4096)
                except OSError:
                    break

    read_until(b"(not shown)")
    assert b"Value for TTY_KEY (not shown)" in seen, seen
    os.write(leader, b"typed-secret-42\n")
    read_until(b"Stored")
    process.wait(30)
    read_until(b"keyring:TTY_KEY}", 2)
    os.close(leader)
    assert process.returncode == 0, seen
    assert b"typed-secret-42" not in seen  # never echoed
    assert b"Stored TTY_KEY in " in seen
    assert portico(portico_home, "secret", "get", "TTY_KEY").out.strip() == "typed-secret-42"
