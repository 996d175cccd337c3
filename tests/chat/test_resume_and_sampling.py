"""Resume after a restart (tools, model, spend come back), kill -9 while streaming,
sampling answered by the configured provider after review."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from portico.chat.events import ToolCallFinished, ToolsChanged
from portico.chat.store import ChatStore
from portico.config.model import ToolCost
from portico.prompts import ApprovalAnswer, ApprovalChoice, SamplingAnswer
from tests.chat.conftest import (
    chat_setup,
    collect,
    everything_spec,
    needs_npm,
    provider,
)
from tests.servers.model_server import text, tool_call

pytestmark = pytest.mark.slow  # talks to real servers or processes

REPO = Path(__file__).resolve().parents[2]


@needs_npm
async def test_resume_after_a_restart_gets_the_loaded_tools_back(models, tmp_path) -> None:
    db = tmp_path / "chats.sqlite3"
    costed = everything_spec(tool_costs=(("get-sum", ToolCost(2, 2)),))
    models.script(
        tool_call("tool_search", {"query": "sum of two numbers", "limit": 1}),
        tool_call("everything__get-sum", {"a": 1, "b": 2}),
        text("Loaded and used."),
    )
    async with chat_setup(costed, providers=(provider(models),), store_path=db) as s:
        chat = await s.host.new()
        run = await collect(chat.send("find a tool that adds"))
        assert run.of(ToolsChanged)[-1].loaded == ("everything__get-sum",)
        conversation = chat.id
    # a new process: new hub, new host, the same database
    models.script(text("Still here."))
    async with chat_setup(costed, providers=(provider(models),), store_path=db) as s:
        resumed = await s.host.open(conversation[:8])
        assert resumed.id == conversation
        assert list(resumed.active_tools) == ["everything__get-sum"]
        assert resumed.model == "scripted/gpt-test"
        assert resumed.context.spend.total("everything") == 2.0
        assert [m.role for m in resumed.messages] == ["user", "assistant"]
        await collect(resumed.send("again"))
    offered = {t["function"]["name"] for t in models.requests[-1].body["tools"]}
    assert offered == {"everything__get-sum", "tool_search"}
    history = models.requests[-1].body["messages"]
    assert [m["role"] for m in history] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
        "user",
    ]


CHILD = """
import asyncio, sys
sys.path.insert(0, {repo!r})
from tests.chat.conftest import chat_setup, provider
from tests.servers.model_server import ModelServer

class Remote:
    openai_url = {url!r}

async def main():
    async with chat_setup(providers=(provider(Remote()),), store_path={db!r}) as s:
        chat = await s.host.new()
        print("ID", chat.id, flush=True)
        async for event in chat.send("tell me a long story"):
            if type(event).__name__ == "TextDelta":
                print("DELTA", event.text, flush=True)

asyncio.run(main())
"""


async def _load(db: Path, conversation: str):  # type: ignore[no-untyped-def]
    store = ChatStore(db)
    try:
        return await store.load(conversation)
    finally:
        await store.close()


def test_kill_9_while_streaming_loses_only_the_streamed_text(models, tmp_path) -> None:
    db = tmp_path / "chats.sqlite3"
    words = [f"word{i}" for i in range(400)]
    models.script({"text": " ".join(words), "delay": 0.02})
    script = CHILD.format(repo=str(REPO), url=models.openai_url, db=str(db))
    child = subprocess.Popen(
        [sys.executable, "-c", script],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ},
        cwd=REPO,
    )
    assert child.stdout is not None
    conversation = child.stdout.readline().split()[1]
    seen = 0
    started = time.monotonic()
    while seen < 100 and time.monotonic() - started < 60:
        if child.stdout.readline().startswith("DELTA"):
            seen += 1
    child.send_signal(signal.SIGKILL)
    child.wait(10)
    child.stdout.close()
    stored = asyncio.run(_load(db, conversation))
    user, answer = stored.messages
    assert user.text == "tell me a long story" and user.status == "complete"
    assert answer.status == "streaming"  # what the crash left; open() shows it stopped
    full = " ".join(words)
    assert answer.text and full.startswith(answer.text)
    assert len(answer.text) < len(full)


@needs_npm
async def test_sampling_from_server_everything_is_answered_by_the_model(models) -> None:
    models.script(
        tool_call("everything__trigger-sampling-request", {"prompt": "Say hi", "maxTokens": 40}),
        text("A greeting from the model"),  # the sampling request
        text("The server got its answer."),
    )
    async with chat_setup(everything_spec(), providers=(provider(models),)) as s:
        s.person.add("approve_tool", ApprovalAnswer(ApprovalChoice.ONCE))
        s.person.add("review_sampling", SamplingAnswer(action="approve"))
        chat = await s.host.new()
        run = await collect(chat.send("make the server sample"))
        [review] = s.person.requests("review_sampling")
        assert review.server == "everything" and "Say hi" in review.messages[0].text
    [finished] = run.of(ToolCallFinished)
    assert finished.ok and "A greeting from the model" in finished.result.text()
    sampled = models.requests[1].body
    assert "Say hi" in sampled["messages"][-1]["content"] and "tools" not in sampled
    assert run.text == "The server got its answer."
    assert json.dumps(models.requests[2].body).count("A greeting from the model") == 1
