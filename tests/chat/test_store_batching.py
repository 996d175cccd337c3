"""The store batches its writes: a row saved several times within WRITE_DELAY is written
once with its newest state, reads see every earlier save, one bad row loses only itself,
and the streamed text goes out without waiting for the batch."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

from portico.chat.messages import Message, ToolCall
from portico.chat.store import ChatStore, StoredConversation


def _count_writes(path: Path) -> None:
    """Triggers that count every insert and update of a message row."""
    with sqlite3.connect(path) as conn:
        conn.executescript(
            "CREATE TABLE writes (what TEXT);"
            "CREATE TRIGGER count_insert AFTER INSERT ON messages "
            "BEGIN INSERT INTO writes VALUES ('insert'); END;"
            "CREATE TRIGGER count_update AFTER UPDATE ON messages "
            "BEGIN INSERT INTO writes VALUES ('update'); END;"
        )


def _writes(path: Path) -> list[str]:
    with sqlite3.connect(path) as conn:
        return [r[0] for r in conn.execute("SELECT what FROM writes")]


def _texts(path: Path) -> dict[str, tuple[str, str]]:
    with sqlite3.connect(path) as conn:
        return {r[0]: (r[1], r[2]) for r in conn.execute("SELECT id, text, status FROM messages")}


async def _until(condition: Callable[[], bool], seconds: float = 10.0) -> None:
    """Poll another connection's view of the file (the writer has no event to wait on)."""
    deadline = time.monotonic() + seconds
    for _ in range(100_000):
        if condition() or time.monotonic() > deadline:
            return
        await asyncio.sleep(0.01)


async def _ready(path: Path) -> ChatStore:
    store = ChatStore(path)
    await store.flush()  # created and migrated
    return store


async def test_a_row_saved_often_is_written_once_with_its_newest_state(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite3"
    store = await _ready(path)
    _count_writes(path)
    store.save_conversation(StoredConversation(id="c1", title="t"))
    answer = Message("a1", "assistant", "", status="streaming")
    call = ToolCall("t1", "tb__echo", {"text": "hi"})
    for step in range(5):  # what one tool call does to its message
        answer.text += f"part{step} "
        if step == 2:
            answer.tool_calls.append(call)
        store.save_message("c1", answer)
    call.outcome, call.result_text = "ok", "hi"
    store.save_tool_call("c1", "a1", 0, call)
    answer.status = "complete"
    store.save_message("c1", answer)
    assert _texts(path) == {}  # nothing yet: the batch waits WRITE_DELAY
    loaded = await store.load("c1")  # a read sees every save made before it
    [message] = loaded.messages
    assert message.text == "part0 part1 part2 part3 part4 " and message.status == "complete"
    assert message.tool_calls[0].outcome == "ok" and message.tool_calls[0].result_text == "hi"
    assert _writes(path) == ["insert"]
    await store.close()


async def test_the_batch_goes_out_by_itself(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite3"
    store = await _ready(path)
    store.save_conversation(StoredConversation(id="c1"))
    store.save_message("c1", Message("u1", "user", "hello"))
    await _until(lambda: bool(_texts(path)))
    assert _texts(path) == {"u1": ("hello", "complete")}
    await store.close()


async def test_streamed_text_does_not_wait_for_the_batch(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite3"
    store = ChatStore(path, write_delay=600)  # a batch would not go out during the test
    store.save_conversation(StoredConversation(id="c1"))
    store.save_message("c1", Message("a1", "assistant", "", status="streaming"))
    await store.flush()
    store.save_text("a1", "Once upon", "streaming")
    await _until(lambda: _texts(path)["a1"][0] == "Once upon")
    assert _texts(path)["a1"] == ("Once upon", "streaming")
    store.save_message("c1", Message("u9", "user", "batched"))
    await asyncio.sleep(0.3)
    assert "u9" not in _texts(path)
    await store.close()
    assert "u9" in _texts(path)


async def test_one_bad_row_loses_only_itself(tmp_path: Path, allow_logs) -> None:
    allow_logs(r"a chat store write failed: FOREIGN KEY constraint failed")
    path = tmp_path / "c.sqlite3"
    store = await _ready(path)
    store.save_conversation(StoredConversation(id="c1"))
    store.save_message("c1", Message("u1", "user", "kept"))
    store.save_message("nowhere", Message("u2", "user", "no such conversation"))
    store.save_message("c1", Message("u3", "user", "kept too"))
    await store.flush()
    assert _texts(path) == {"u1": ("kept", "complete"), "u3": ("kept too", "complete")}
    await store.close()


async def test_a_delete_keeps_its_place_among_the_saves(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite3"
    store = await _ready(path)
    store.save_conversation(StoredConversation(id="c1"))
    store.save_message("c1", Message("u1", "user", "first"))
    store.write(lambda conn: conn.execute("DELETE FROM messages WHERE id='u1'"))
    store.save_message("c1", Message("u2", "user", "second"))
    await store.flush()
    assert _texts(path) == {"u2": ("second", "complete")}
    await store.close()


async def test_close_writes_what_is_pending(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite3"
    store = await _ready(path)
    store.save_conversation(StoredConversation(id="c1"))
    store.save_message("c1", Message("u1", "user", "last words"))
    await store.close()
    assert _texts(path) == {"u1": ("last words", "complete")}
