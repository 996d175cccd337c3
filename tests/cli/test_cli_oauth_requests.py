"""Issue 26, item 7: a CLI process with a stored token made extra OAuth requests before
using it (an unauthenticated probe, answered 401, then the metadata again)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.oauth import Oidc, cli_login, run_portico, write_config
from tests.servers.protected import ProtectedState

pytestmark = pytest.mark.slow  # a real OAuth server and CLI processes


@pytest.fixture(autouse=True)
def no_real_browser(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BROWSER", "true")


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
async def test_a_stored_token_is_used_at_once(
    oidc: Oidc, protected: ProtectedState, portico_home: Path, tmp_path: Path, protocol: str
) -> None:
    write_config(portico_home, oidc.resource)
    if protocol != "auto":
        config = portico_home / "config" / "config.yaml"
        config.write_text(
            config.read_text().replace(
                "    auth: oauth\n", f"    auth: oauth\n    protocol: {protocol}\n"
            )
        )
    code, _, err = await cli_login(portico_home, tmp_path)
    assert code == 0, err
    before = (protected.rejected, protected.metadata_served, protected.accepted)
    code, out, err = await run_portico(
        portico_home,
        "mcp",
        "call",
        "guarded",
        "echo",
        "--project",
        str(tmp_path),
        "--args",
        '{"text": "hi"}',
    )
    assert code == 0, err
    print(out)
    after = (protected.rejected, protected.metadata_served, protected.accepted)
    print(f"\n{protocol}: rejected, metadata, accepted: {before} -> {after}")
    assert after[0] == before[0], "an unauthenticated request was made (401)"
    assert after[1] == before[1], "the metadata was fetched again"
