"""A resumed conversation gets back the tools tool_search had loaded into it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from portico.chat.conversations import ConversationError, ConversationStore
from portico.runtime.registry import Registry
from portico.runtime.toolsearch import TOOL_SEARCH
from tests.helpers.tools import TOOLS, stdio_spec


async def test_loaded_tools_come_back_with_the_conversation() -> None:
    registry = Registry(defer_tools=0)  # always defer: the model starts with tool_search only
    registry.set_server(stdio_spec("fs"), TOOLS)
    store = ConversationStore()
    chat = store.new("tidy the docs")
    assert [t.name for t in registry.model_tools(chat.active_tools)] == [TOOL_SEARCH]

    await registry.call(TOOL_SEARCH, {"query": "directory", "limit": 1}, active=chat.active_tools)
    chat.messages.append({"role": "user", "content": "list the docs folder"})
    path = store.save(chat)
    assert oct(os.stat(path).st_mode & 0o777) == "0o600"

    resumed = ConversationStore().load(chat.id)  # a new process would do exactly this
    list_dir = next(x.qualified for x in registry.tools() if x.tool == "list.dir")
    assert [t.name for t in registry.model_tools(resumed.active_tools)] == [list_dir, TOOL_SEARCH]
    assert resumed.messages == chat.messages and resumed.title == "tidy the docs"


def test_a_branch_keeps_messages_and_tools_and_names_its_parent() -> None:
    store = ConversationStore()
    chat = store.new("first")
    chat.active_tools.add(["fs__read_file"])
    chat.messages.append({"role": "user", "content": "hi"})
    branch = store.branch(chat)
    assert (branch.parent, list(branch.active_tools), branch.messages) == (
        chat.id,
        ["fs__read_file"],
        chat.messages,
    )
    branch.active_tools.add(["fs__write_file"])
    assert list(chat.active_tools) == ["fs__read_file"]  # the source is untouched


def test_unreadable_files_name_the_file(portico_home: Path) -> None:
    store = ConversationStore()
    store.root.mkdir(parents=True)
    (store.root / "broken.json").write_text("{not json", encoding="utf-8")
    (store.root / "future.json").write_text(json.dumps({"format": 99, "id": "future"}))
    with pytest.raises(ConversationError, match=r"broken\.json: not a readable conversation"):
        store.load("broken")
    with pytest.raises(ConversationError, match=r"future\.json: written by a newer Portico"):
        store.load("future")
    with pytest.raises(ConversationError, match=r"missing\.json: no such conversation"):
        store.load("missing")
    good = store.new("ok")
    store.save(good)
    assert [c.id for c in store.recent()] == [good.id]
