"""Attack 9 (issue 21): ``profile`` was accepted (global and project) but never applied:
an identity header ``value_from: profile`` always said ``default``. Rule: the effective
``profile`` (the person's, or their project's) is the name their servers see."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from portico.config import load
from portico.policy.prompters import NonInteractivePrompter
from portico.services import build_services

Seen = list[dict[str, str]]


@pytest.fixture
def recording_server() -> Iterator[tuple[int, Seen]]:
    """An HTTP endpoint that records each request's headers and answers 502."""
    seen: Seen = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            seen.append({k.lower(): v for k, v in self.headers.items()})
            self.send_response(502)
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_GET = do_POST

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1], seen
    server.shutdown()
    server.server_close()


async def _profile_seen(project: Path | None, seen: Seen) -> str:
    config = load(project)
    services = build_services(NonInteractivePrompter(), config=config)
    hub = services.start_hub()
    try:
        await hub.apply(config)
        for _ in range(500):
            if seen:
                break
            await asyncio.sleep(0.02)
    finally:
        await hub.close()
    assert seen, "the server was never reached"
    return seen[0]["x-portico-profile"]


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
