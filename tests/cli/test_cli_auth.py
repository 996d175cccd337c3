"""``portico mcp login|logout`` and ``portico secret`` as a person runs them."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from tests.helpers.oauth import Oidc, cli_login, run_portico, write_config
from tests.servers.protected import ProtectedState

pytestmark = pytest.mark.slow  # talks to real servers or processes


@pytest.fixture(autouse=True)
def no_real_browser(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BROWSER", "true")  # `true URL`: a sign-in never opens a real tab


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

    code, out2, _ = await run_portico(
        portico_home, "mcp", "logout", "guarded", "--project", str(tmp_path)
    )
    assert code == 0 and "Signed out of 'guarded'" in out2
    assert not token_file.exists()


async def test_login_unknown_server_and_stdio(portico_home: Path, tmp_path: Path) -> None:
    write_config(portico_home, "http://127.0.0.1:9/mcp")
    code, _, err = await run_portico(
        portico_home, "mcp", "auth", "nope", "--project", str(tmp_path)
    )
    assert code == 2 and "no server named 'nope'" in err and "guarded" in err


async def test_secret_set_with_a_locked_keyring_is_one_line(portico_home: Path) -> None:
    write_config(portico_home, "http://127.0.0.1:9/mcp")
    code, out, err = await run_portico(
        portico_home,
        "secret",
        "set",
        "API_KEY",
        stdin=b"s3cret\n",
        keyring_backend="tests.helpers.keyrings.LockedKeyring",
    )
    lines = err.strip().splitlines()
    assert code == 1 and "Stored" not in out, (out, err)
    assert len(lines) == 1 and lines[0].startswith("portico: "), err
    assert "'API_KEY'" in err and "LockedKeyring" in err and "unlock your keyring" in err
    assert "Traceback" not in err and "s3cret" not in err
