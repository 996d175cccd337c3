"""The chat list in the store: rename, pin (pinned first), archive (out of the list, still
found), delete with an undo (restore) until it is purged, and the schema 4 migration of a
store written before it (every conversation, message and call kept)."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest

from portico.chat import schema
from portico.chat.messages import Message, ToolCall
from portico.chat.store import KEEP_DELETED, ChatStore, StoredConversation, StoreError


def _chat(store: ChatStore, cid: str, title: str, text: str, when: float) -> None:
    store.save_conversation(StoredConversation(id=cid, title=title, created=when, updated=when))
    store.save_message(cid, Message(f"{cid}-q", "user", text, created=when))


async def test_pin_archive_rename(tmp_path: Path) -> None:
    store = ChatStore(tmp_path / "c.sqlite3")
    for i, name in enumerate(["old", "mid", "new"]):
        _chat(store, name, name.title(), f"about {name} things", 100 + i)
    assert [c.id for c in await store.list()] == ["new", "mid", "old"]
    await store.set_pinned("old", True)
    listed = await store.list()
    assert [(c.id, c.pinned) for c in listed] == [("old", True), ("new", False), ("mid", False)]
    assert [c.id for c in await store.list(pinned_first=False)] == ["new", "mid", "old"]
    await store.set_archived("mid", True)
    assert [c.id for c in await store.list()] == ["old", "new"]
    assert [(c.id, c.archived) for c in await store.list(archived=True)] == [("mid", True)]
    assert [h.conversation_id for h in await store.search("mid")] == ["mid"]  # still found
    await store.set_archived("mid", False)
    await store.set_pinned("old", False)
    assert [c.id for c in await store.list()] == ["new", "mid", "old"]
    await store.rename("new", "  Fresh  ")
    assert (await store.load("new")).title == "Fresh"
    with pytest.raises(StoreError, match="cannot be empty"):
        await store.rename("new", "  ")
    with pytest.raises(StoreError, match="no conversation nope"):
        await store.set_pinned("nope", True)
    await store.close()


async def test_delete_then_undo_then_purge(tmp_path: Path) -> None:
    store = ChatStore(tmp_path / "c.sqlite3")
    _chat(store, "keep", "Keep", "ordinary words", 100)
    _chat(store, "gone", "Gone", "secret recipe", 200)
    await store.delete("gone")
    assert [c.id for c in await store.list()] == ["keep"]
    assert await store.search("recipe") == []
    with pytest.raises(StoreError, match="was deleted; bring it back with `portico chat --restore"):
        await store.load("gone")
    with pytest.raises(StoreError, match="no conversation gon "):
        await store.resolve_id("gon")
    assert await store.resolve_id("gon", deleted=True) == "gone"
    await store.restore("gone")
    assert (await store.load("gone")).messages[0].text == "secret recipe"
    assert [h.conversation_id for h in await store.search("recipe")] == ["gone"]
    with pytest.raises(StoreError, match="no deleted conversation gone"):
        await store.restore("gone")
    await store.delete("gone")
    assert not await store.purge("keep")  # not deleted: untouched
    assert await store.purge("gone")
    with pytest.raises(StoreError, match="no deleted conversation"):
        await store.restore("gone")
    await store.close()
    with sqlite3.connect(tmp_path / "c.sqlite3") as conn:
        assert (
            conn.execute("SELECT count(*) FROM messages WHERE conversation_id='gone'").fetchone()[0]
            == 0
        )
        found = conn.execute("SELECT rowid FROM messages_fts WHERE messages_fts MATCH 'recipe'")
        assert found.fetchall() == []


async def test_a_chat_deleted_a_day_ago_is_gone_when_the_store_opens(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite3"
    store = ChatStore(path)
    _chat(store, "recent", "Recent", "x", 100)
    _chat(store, "stale", "Stale", "y", 100)
    await store.delete("recent")
    await store.delete("stale")
    await store.close()
    with sqlite3.connect(path) as conn:
        conn.execute(
            "UPDATE conversations SET deleted=? WHERE id='stale'",
            (time.time() - KEEP_DELETED - 60,),
        )
    store = ChatStore(path)
    await store.restore("recent")  # still within its day
    with pytest.raises(StoreError, match="no deleted conversation stale"):
        await store.restore("stale")
    await store.close()


async def test_a_schema_3_store_is_migrated_and_loses_nothing(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite3"
    conn = sqlite3.connect(path, isolation_level=None)
    for script in schema.MIGRATIONS[:3]:
        for statement in schema._statements(script):
            conn.execute(statement)
    conn.execute("PRAGMA user_version = 3")
    conn.execute(
        "INSERT INTO conversations (id, title, created, updated, model, leaf_id, yolo, "
        "active_tools, input_tokens, output_tokens) VALUES "
        "('c3', 'Written by 3', 5, 6, 'p/m', 'a', 1, '[\"s__t\"]', 11, 22)"
    )
    conn.execute(
        "INSERT INTO messages (id, conversation_id, role, text, created) VALUES "
        "('q', 'c3', 'user', 'old words', 5)"
    )
    conn.execute(
        "INSERT INTO messages (id, conversation_id, parent_id, role, text, created) "
        "VALUES ('a', 'c3', 'q', 'assistant', 'old reply', 6)"
    )
    conn.execute("INSERT INTO messages_fts(messages_fts) VALUES ('rebuild')")
    conn.execute(
        "INSERT INTO tool_calls (id, message_id, conversation_id, name, outcome, "
        "result_text) VALUES ('t', 'a', 'c3', 's__t', 'ok', 'the result')"
    )
    conn.close()
    store = ChatStore(path)
    [row] = await store.list()
    assert (row.id, row.title, row.message_count, row.pinned, row.archived) == (
        "c3",
        "Written by 3",
        2,
        False,
        False,
    )
    stored = await store.load("c3")
    assert (stored.model, stored.leaf_id, stored.yolo, stored.active_tools) == (
        "p/m",
        "a",
        True,
        ["s__t"],
    )
    assert (stored.input_tokens, stored.output_tokens) == (11, 22)
    assert [(m.id, m.parent_id, m.text) for m in stored.messages] == [
        ("q", None, "old words"),
        ("a", "q", "old reply"),
    ]
    assert stored.messages[1].tool_calls == [
        ToolCall("t", "s__t", outcome="ok", result_text="the result")
    ]
    assert [h.message_id for h in await store.search("reply")] == ["a"]
    await store.set_pinned("c3", True)
    assert (await store.list())[0].pinned
    await store.close()
    with sqlite3.connect(path) as check:
        assert check.execute("PRAGMA user_version").fetchone()[0] == schema.VERSION == 6
