"""MCP Apps ``visibility`` in a chat, end to end (the SDK's Apps server and the scripted
model over sockets): a tool for views only is never offered to the model, neither in the
tool list nor behind tool_search, and a model that names it anyway is refused before
anything reaches the server; the model-only tool is offered to it as usual."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from portico.chat.events import ToolCallFinished, TurnFinished
from portico.config.model import TrustLevel
from tests.chat.conftest import chat_setup, collect, provider
from tests.helpers.model_server import model_server, models
from tests.helpers.specs import spec_for
from tests.servers.model_server import text, tool_call

pytestmark = pytest.mark.slow  # a real server process and the scripted model server

__all__ = ["model_server", "models"]

VIEWER = Path(__file__).parents[1] / "servers" / "viewer.py"


def arrived(calls: Path) -> list[dict[str, Any]]:
    if not calls.exists():
        return []
    return [json.loads(line) for line in calls.read_text().splitlines()]


def offered(body: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] for t in body["tools"]]


async def test_a_tool_for_views_only_never_reaches_the_model(models, tmp_path: Path) -> None:
    calls = tmp_path / "calls.jsonl"
    spec = spec_for(
        "viewer",
        command=sys.executable,
        args=(str(VIEWER), "--calls", str(calls)),
        trust=TrustLevel.FULL,  # no approval stands between a call and the server
    )
    models.script(
        tool_call("viewer__refresh", {"city": "Oslo"}),  # named although not offered
        text("I cannot refresh it."),
        tool_call("tool_search", {"query": "refresh the weather of a city"}),
        text("Nothing found."),
    )
    async with chat_setup(spec, providers=(provider(models),)) as s:
        tools = {t.qualified for t in s.hub.registry.tools()}
        assert {"viewer__refresh", "viewer__forecast", "viewer__show_weather"} <= tools
        chat = await s.host.new()
        run = await collect(chat.send("Refresh Oslo"))
        assert isinstance(run.last, TurnFinished)
        [finished] = run.of(ToolCallFinished)
        assert finished.result is not None and finished.result.is_error
        assert "no tool named 'viewer__refresh'" in finished.result.text()
        assert arrived(calls) == []  # refused before the server heard of it

        first = offered(models.requests[0].body)
        assert "viewer__refresh" not in first
        assert {"viewer__show_weather", "viewer__forecast", "viewer__plain"} <= set(first)
        answer = [m for m in models.requests[1].body["messages"] if m["role"] == "tool"]
        assert "no tool named 'viewer__refresh'" in answer[0]["content"]

        # behind tool_search (more tools than defer_tools): not listed, never found
        s.hub.registry.defer_tools = 1
        later = await s.host.new()
        await collect(later.send("Refresh Oslo again"))
        deferred, after_search = models.requests[2].body, models.requests[3].body
        assert offered(deferred) == ["tool_search"]
        catalogue = deferred["tools"][0]["function"]["description"]
        assert "viewer__forecast" in catalogue and "viewer__refresh" not in catalogue
        found = next(m for m in after_search["messages"] if m["role"] == "tool")["content"]
        assert "viewer__show_weather" in found and "viewer__refresh" not in found
        assert "viewer__refresh" not in offered(after_search)
        assert arrived(calls) == []
