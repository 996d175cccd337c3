"""Attack 9 (issue 21): ``profile`` was accepted (global and project) but never applied:
an identity header ``value_from: profile`` always said ``default``. Rule: the effective
``profile`` (the person's, or their project's) is the name their servers see."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from portico.config import load
from portico.policy.prompters import NonInteractivePrompter
from portico.services import build_services
from tests.helpers.servers import Seen
from tests.helpers.servers import recording_server as start_recording_server


@pytest.fixture
def recording_server() -> Iterator[tuple[int, Seen]]:
    with start_recording_server() as running:
        yield running


async def _profile_seen(project: Path | None, seen: Seen) -> str:
    config = load(project)
    services = build_services(NonInteractivePrompter(), config=config)
    hub = services.start_hub()
    try:
        await hub.apply(config)
        for _ in range(500):
            if seen.requests:
                break
            await asyncio.sleep(0.02)
    finally:
        await hub.close()
    assert seen.requests, "the server was never reached"
    return {k.lower(): v for k, v in seen.requests[0][2].items()}["x-portico-profile"]


def _person(home: Path, port: int) -> None:
    (home / "config").mkdir(parents=True, exist_ok=True)
    (home / "config" / "config.yaml").write_text(
        "profile: work\n"
        "mcp_servers:\n"
        "  ident:\n"
        f"    url: http://127.0.0.1:{port}/mcp\n"
        "    protocol: legacy\n"
        "    identity_header: {name: X-Portico-Profile, value_from: profile}\n",
        encoding="utf-8",
    )


async def test_the_person_s_profile_is_the_name_their_servers_see(
    portico_home: Path, recording_server: tuple[int, Seen]
) -> None:
    port, seen = recording_server
    _person(portico_home, port)
    assert await _profile_seen(None, seen) == "work"


async def test_a_project_s_profile_is_what_its_servers_see(
    portico_home: Path, project: Path, recording_server: tuple[int, Seen]
) -> None:
    """A profile is a name, not a permission: a project may choose it for the servers it
    runs with (a work project says ``work``), as any other non-security setting."""
    port, seen = recording_server
    _person(portico_home, port)
    (project / ".portico" / "config.yaml").write_text("profile: client-a\n", encoding="utf-8")
    assert load(project).settings.profile == "client-a"
    assert await _profile_seen(project, seen) == "client-a"
