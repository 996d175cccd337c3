"""Project HTTP trust reasons end to end through the Hub, with a resolver we control,
and the password of a ``user:pass@`` URL masked everywhere a review shows the URL."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from portico.config.masking import mask_url
from portico.policy.prompters import NonInteractivePrompter
from portico.policy.setup import Policy
from portico.prompts import TrustChoice
from portico.runtime.events import Status
from portico.runtime.hub import Hub
from tests.helpers.cli import run_cli
from tests.helpers.dns import Dns

from .conftest import ScriptedPerson, config_of
from .test_trust_http import http_spec

pytestmark = pytest.mark.slow  # talks to real servers or processes

PASSWORD = "hunter2-pw"


def specs(project: Path) -> list[Any]:
    return [
        http_spec(project, f"https://alice:{PASSWORD}@creds.portico.test/mcp", name="creds"),
        http_spec(project, "https://down.portico.test/mcp", name="down"),
        http_spec(project, "https://intranet.portico.test/mcp", name="intranet"),
    ]


def resolver() -> Dns:
    return Dns({"creds.portico.test": ["93.184.216.34"], "intranet.portico.test": ["10.1.2.3"]})


async def test_each_reason_parks_the_server_with_plain_words(project: Path) -> None:
    dns = resolver()
    async with Hub(hooks=Policy(NonInteractivePrompter(), resolver=dns).hooks()) as hub:
        await hub.apply(config_of(*specs(project)))
        states = {name: hub.connection(name).state for name in ("creds", "down", "intranet")}
    for name, state in states.items():
        assert state.status is Status.AWAITING_TRUST, (name, state)
        assert (state.error or "").startswith(f"server '{name}' in ")
        assert (
            f".portico/mcp.toml is waiting for trust review: run 'portico mcp trust {name}' "
            "or open it in the app"
        ) in (state.error or "")
    assert "the URL carries credentials (user:password@) in plain text" in (
        states["creds"].error or ""
    )
    assert PASSWORD not in (states["creds"].error or "")
    down = states["down"].error or ""
    assert "the DNS lookup of 'down.portico.test' failed" in down
    assert "a trust decision cannot be saved until it resolves" in down
    assert "'intranet.portico.test' resolves to 10.1.2.3, a private address" in (
        states["intranet"].error or ""
    )
    # the private address was never dialled: the check is all that ran
    assert sorted(set(dns.lookups)) == [
        "creds.portico.test",
        "down.portico.test",
        "intranet.portico.test",
    ]


async def test_review_shows_the_url_with_its_password_masked(
    project: Path, person: ScriptedPerson
) -> None:
    person.add("review_trust", TrustChoice.DECLINE)
    creds = specs(project)[0]
    async with Hub(hooks=Policy(person, resolver=resolver()).hooks()) as hub:
        await hub.apply(config_of(creds))
        state = hub.connection("creds").state
        assert state.status is Status.AWAITING_TRUST
    [request] = person.requests("review_trust")
    assert request.target == "https://alice:***@creds.portico.test/mcp"
    assert PASSWORD not in repr(request)
    assert request.reasons == ("the URL carries credentials (user:password@) in plain text",)


def test_mask_url_shapes() -> None:
    assert mask_url("https://u:p@h.example:8443/x?q=1") == "https://u:***@h.example:8443/x?q=1"
    assert mask_url("https://token@h.example/x") == "https://***@h.example/x"  # bare user: a token
    assert mask_url("https://h.example/x") == "https://h.example/x"
    assert mask_url("http://u:p%40ss@[::1]:9/mcp") == "http://u:***@[::1]:9/mcp"


def test_portico_mcp_review_masks_the_password(portico_home: Path, project: Path) -> None:
    (project / ".portico" / "mcp.toml").write_text(
        f'[mcp.web]\nurl = "http://alice:{PASSWORD}@127.0.0.1:9/mcp"\n'
    )
    done = run_cli(portico_home, "mcp", "review", "--project", str(project))
    assert done.returncode == 0, done.stderr
    assert "url: http://alice:***@127.0.0.1:9/mcp" in done.stdout
    assert "the URL carries credentials (user:password@) in plain text" in done.stdout
    assert PASSWORD not in done.stdout + done.stderr


def test_login_waits_for_the_trust_review(portico_home: Path, project: Path) -> None:
    """``portico mcp login`` never contacts an unreviewed project server."""
    (project / ".portico" / "mcp.toml").write_text(
        '[mcp.web]\nurl = "http://127.0.0.1:9/mcp"\n\n[mcp.web.oauth]\nclient_id = "portico"\n'
    )
    waiting = run_cli(
        portico_home, "mcp", "login", "web", "--no-browser", "--project", str(project)
    )
    assert waiting.returncode == 1
    assert "is waiting for trust review: run 'portico mcp trust web'" in waiting.stderr
    assert "127.0.0.1 is a loopback address" in waiting.stderr
    trusted = run_cli(portico_home, "mcp", "trust", "web", "--accept", "--project", str(project))
    assert trusted.returncode == 0, trusted.stderr
    # reviewed: now it is contacted (nothing listens on port 9, so the login fails there)
    tried = run_cli(portico_home, "mcp", "login", "web", "--no-browser", "--project", str(project))
    assert tried.returncode == 1
    assert "waiting for trust review" not in tried.stderr
    assert "web" in tried.stderr and "127.0.0.1:9" in tried.stderr
