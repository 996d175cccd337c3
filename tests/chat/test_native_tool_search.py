"""Deferred tools per provider: with more tools than ``defer_tools``, an Anthropic
provider gets the Messages API's own tool search (``tool_search_tool_bm25_20251119``)
with every deferred tool sent ``defer_loading: true``, the search's blocks go back in
the next request as they came and its finds stay loaded; an OpenAI-compatible provider
(or an Anthropic one with ``native_tool_search: false``) gets Portico's tool_search."""

from __future__ import annotations

import pytest

from portico.chat.events import ToolsChanged, TurnFinished
from tests.chat.conftest import chat_setup, collect, provider
from tests.helpers.specs import toolbox_spec
from tests.servers.model_server import text

pytestmark = pytest.mark.slow  # the toolbox server and the scripted model server

SEARCH = {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}


async def test_anthropic_searches_deferred_tools_itself(models) -> None:
    models.script(
        {
            "tool_search": {"query": "add two numbers", "found": ["toolbox__add"]},
            "tool_calls": [{"name": "toolbox__add", "arguments": {"a": 2, "b": 40}}],
        },
        text("It is 42."),
    )
    spec = provider(models, "claude", kind="anthropic")
    async with chat_setup(toolbox_spec(), providers=(spec,)) as s:
        chat = await s.host.new("claude/claude-test")
        run = await collect(chat.send("2 + 40?"))
        assert isinstance(run.last, TurnFinished) and run.text == "It is 42."
        assert "toolbox__add" in chat.active_tools
        assert run.of(ToolsChanged)[0].loaded == ("toolbox__add",)
    first, second = (r.body for r in models.requests)
    assert first["tools"][0] == SEARCH
    offered = {t["name"]: t for t in first["tools"][1:]}
    assert "tool_search" not in offered and len(offered) > 10
    assert all(t["defer_loading"] is True for t in offered.values())
    blocks = second["messages"][1]["content"]
    assert [b["type"] for b in blocks] == ["server_tool_use", "tool_search_tool_result", "tool_use"]
    assert blocks[0]["name"] == "tool_search_tool_bm25"
    assert blocks[0]["input"] == {"query": "add two numbers"}
    assert blocks[1]["tool_use_id"] == blocks[0]["id"]
    assert blocks[1]["content"]["tool_references"] == [
        {"type": "tool_reference", "tool_name": "toolbox__add"}
    ]
    again = {t["name"]: t for t in second["tools"][1:]}
    assert "defer_loading" not in again["toolbox__add"]  # found: loaded from now on
    assert again["toolbox__echo"]["defer_loading"] is True


@pytest.mark.parametrize("kind", ["openai", "anthropic-without"])
async def test_elsewhere_portico_s_own_tool_search_is_offered(models, kind: str) -> None:
    spec = (
        provider(models)
        if kind == "openai"
        else provider(models, "claude", kind="anthropic", native_tool_search=False)
    )
    async with chat_setup(toolbox_spec(), providers=(spec,)) as s:
        chat = await s.host.new()
        await collect(chat.send("hi"))
    tools = models.requests[0].body["tools"]
    names = [t["function"]["name"] if kind == "openai" else t["name"] for t in tools]
    assert names == ["tool_search"]
    assert "defer_loading" not in str(tools) and "tool_search_tool_bm25" not in str(tools)
