"""``portico mcp login|logout`` and ``portico secret`` as a person runs them."""

from __future__ import annotations

import asyncio
import os
import stat
import sys
from pathlib import Path

from tests.auth.conftest import Oidc, ScriptedBrowser
from tests.servers.protected import ProtectedState


def _env(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PORTICO_HOME"] = str(home)
    # Never the real keyring: the fail backend makes Portico use its 0600 files.
    env["PYTHON_KEYRING_BACKEND"] = "keyring.backends.fail.Keyring"
    return env


async def portico(
    home: Path, *args: str, stdin: bytes = b"", keyring_backend: str | None = None
) -> tuple[int, str, str]:
    env = _env(home)
    if keyring_backend:
        env["PYTHON_KEYRING_BACKEND"] = keyring_backend
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "portico.cli.main",
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )
    out, err = await asyncio.wait_for(process.communicate(stdin), 60)
    return process.returncode or 0, out.decode(), err.decode()


def write_config(home: Path, url: str, *, file_fallback: bool = True) -> None:
    config = home / "config"
    config.mkdir(parents=True, exist_ok=True)
    fallback = "secrets:\n  file_fallback: true\n" if file_fallback else ""
    (config / "config.yaml").write_text(
        f"{fallback}mcp_servers:\n  guarded:\n    url: {url}\n    auth: oauth\n"
        # The test authorization server is plain http on another loopback port.
        "    oauth:\n      allow_private_endpoints: true\n",
        encoding="utf-8",
    )


async def cli_login(
    home: Path, project: Path, name: str = "guarded", *, deny: bool = False
) -> tuple[int, str, str]:
    """``portico mcp login NAME --no-browser`` in its own process; the scripted browser
    follows the URL it prints to the loopback listener it names."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "portico.cli.main",
        "mcp",
        "login",
        name,
        "--no-browser",
        "--project",
        str(project),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=_env(home),
    )
    assert process.stdout is not None
    url = None
    redirect = None
    while url is None or redirect is None:
        line = (await asyncio.wait_for(process.stdout.readline(), 30)).decode()
        assert line, "login ended before printing the URL"
        if line.strip().startswith("http") and "code_challenge" in line:
            url = line.strip()
        if "Waiting for the redirect to " in line:
            redirect = line.split("Waiting for the redirect to ")[1].split()[0]
    await ScriptedBrowser(deny=deny).run(url, redirect, follow_final=True)
    out, err = await asyncio.wait_for(process.communicate(), 30)
    return process.returncode or 0, out.decode(), err.decode()


async def test_login_then_logout(
    oidc: Oidc, protected: ProtectedState, portico_home: Path, tmp_path: Path
) -> None:
    write_config(portico_home, oidc.resource)
    code, out, err = await cli_login(portico_home, tmp_path)
    assert code == 0, err
    assert "Signed in to 'guarded'" in out
    token_file = portico_home / "state" / "mcp-tokens" / "guarded.json"
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    assert "access_token" in token_file.read_text()

    code, out2, _ = await portico(
        portico_home, "mcp", "logout", "guarded", "--project", str(tmp_path)
    )
    assert code == 0 and "Signed out of 'guarded'" in out2
    assert not token_file.exists()


async def test_login_unknown_server_and_stdio(portico_home: Path, tmp_path: Path) -> None:
    write_config(portico_home, "http://127.0.0.1:9/mcp")
    code, _, err = await portico(portico_home, "mcp", "auth", "nope", "--project", str(tmp_path))
    assert code == 2 and "no server named 'nope'" in err and "guarded" in err


async def test_secret_set_with_a_locked_keyring_is_one_line(portico_home: Path) -> None:
    write_config(portico_home, "http://127.0.0.1:9/mcp")
    code, out, err = await portico(
        portico_home,
        "secret",
        "set",
        "API_KEY",
        stdin=b"s3cret\n",
        keyring_backend="tests.memory_keyring.LockedKeyring",
    )
    lines = err.strip().splitlines()
    assert code == 1 and "Stored" not in out, (out, err)
    assert len(lines) == 1 and lines[0].startswith("portico: "), err
    assert "'API_KEY'" in err and "LockedKeyring" in err and "unlock your keyring" in err
    assert "Traceback" not in err and "s3cret" not in err
