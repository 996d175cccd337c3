"""Issue 26, item 12: editing a server's config restarts it with a new connection, and
that wiped its Activity and Health. It is the same server: the history goes on."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from portico.config.model import Config
from portico.runtime.events import Status
from portico.runtime.hub import Hub

from .conftest import make_spec

pytestmark = pytest.mark.slow  # real stdio servers

TINY = Path(__file__).resolve().parents[1] / "servers" / "tiny.py"


def _tiny(tools: int) -> Config:
    spec = make_spec(
        "tiny", "stdio", command=sys.executable, args=(str(TINY), "--tools", str(tools))
    )
    return Config(servers=(spec,))


async def test_a_respawned_server_keeps_its_activity_and_health() -> None:
    async with Hub() as hub:
        await hub.apply(_tiny(1))
        first = hub.connection("tiny")
        assert first.state.status is Status.RUNNING
        await first.call_tool("echo", {"text": "before the edit"})
        await hub.apply(_tiny(2))  # an edit: the server restarts with a new connection
        second = hub.connection("tiny")
        assert second is not first and second.state.status is Status.RUNNING
        await second.call_tool("echo", {"text": "after the edit"})
        calls = [e for e in second.activity.snapshot() if e.method == "tools/call"]
        texts = [(e.message or {})["params"]["arguments"]["text"] for e in calls]
        assert texts == ["before the edit", "after the edit"]
        health = second.activity.health.snapshot()
        assert health.calls == 2
        assert health.connects == 2 and health.restarts == 1
