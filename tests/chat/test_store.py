"""The SQLite store: list, search, rename, delete, export, migrations, the JSON import."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from portico.chat.messages import Message, Round, ToolCall
from portico.chat.store import ChatStore, StoredConversation, StoreError


def _conversation(store: ChatStore, cid: str, title: str, texts: list[str], when: float) -> None:
    store.save_conversation(
        StoredConversation(id=cid, title=title, created=when, updated=when, model="p/m")
    )
    parent = None
    for i, body in enumerate(texts):
        message = Message(
            f"{cid}-{i}",
            "user" if i % 2 == 0 else "assistant",
            body,
            parent_id=parent,
            created=when + i,
        )
        store.save_message(cid, message)
        parent = message.id


async def test_list_search_rename_delete(tmp_path: Path) -> None:
    store = ChatStore(tmp_path / "c.sqlite3")
    _conversation(store, "aaa111", "Weather", ["what is the weather in Oslo", "Rainy."], 100)
    _conversation(store, "bbb222", "Sums", ["add two numbers", "42 is the answer"], 200)
    listed = await store.list()
    assert [c.id for c in listed] == ["bbb222", "aaa111"] and listed[0].message_count == 2
    hits = await store.search("weath")  # the last word is a prefix
    assert [(h.conversation_id, h.snippet) for h in hits] == [
        ("aaa111", "what is the [weather] in Oslo")
    ]
    assert [h.conversation_id for h in await store.search("answer 42")] == ["bbb222"]
    assert await store.search('"') == []
    await store.rename("aaa111", "Oslo weather")
    assert (await store.list())[0].title == "Oslo weather"
    assert await store.resolve_id("bb") == "bbb222"
    with pytest.raises(StoreError, match="no conversation zz"):
        await store.resolve_id("zz")
    await store.delete("aaa111")
    assert [c.id for c in await store.list()] == ["bbb222"]
    assert await store.search("oslo") == []
    with pytest.raises(StoreError):
        await store.delete("aaa111")
    await store.close()


async def test_export_markdown_and_json(tmp_path: Path) -> None:
    store = ChatStore(tmp_path / "c.sqlite3")
    store.save_conversation(StoredConversation(id="c1", title="Sums", model="p/m"))
    store.save_message("c1", Message("u", "user", "2 + 40?"))
    call = ToolCall("t1", "everything__get-sum", {"a": 2, "b": 40}, "", "ok", "The sum is 42.")
    store.save_message(
        "c1",
        Message(
            "a",
            "assistant",
            "It is 42.",
            parent_id="u",
            model="p/m",
            tool_calls=[call],
            rounds=[Round("", ["t1"]), Round("It is 42.", [])],
        ),
    )
    markdown = await store.export("c1", "md")
    assert markdown.startswith("# Sums\n")
    assert "## You\n\n2 + 40?" in markdown
    assert '**Tool call** `everything__get-sum` `{"a": 2, "b": 40}` — ok:' in markdown
    assert markdown.index("The sum is 42.") < markdown.index("It is 42.")
    data = json.loads(await store.export("c1", "json"))
    assert data["messages"][1]["tool_calls"][0]["result"] == "The sum is 42."
    await store.close()


async def test_a_tool_calls_view_is_kept_with_it(tmp_path: Path) -> None:
    """A reopened chat can say a result had a view even when its server is gone."""
    store = ChatStore(tmp_path / "c.sqlite3")
    store.save_conversation(StoredConversation(id="c1", title="Weather", model="p/m"))
    shown = ToolCall(
        "t1",
        "viewer__show_weather",
        {"city": "Oslo"},
        "",
        "ok",
        "{}",
        view_uri="ui://viewer/weather",
    )
    plain = ToolCall("t2", "viewer__get_time", {}, "", "ok", "12:00")
    store.save_message("c1", Message("a", "assistant", "Oslo.", tool_calls=[shown, plain]))
    store.save_message("c1", Message("a", "assistant", "Oslo.", tool_calls=[shown, plain]))
    await store.close()
    again = ChatStore(tmp_path / "c.sqlite3")
    calls = (await again.load("c1")).messages[0].tool_calls
    assert [c.view_uri for c in calls] == ["ui://viewer/weather", None]
    await again.close()


async def test_a_newer_database_is_refused_not_rewritten(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite3"
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA user_version = 99")
    store = ChatStore(path)
    with pytest.raises(StoreError, match="newer Portico"):
        await store.list()
    await store.close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 99


async def test_a_broken_file_says_what_to_do(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite3"
    path.write_bytes(b"this is not a database" * 100)
    store = ChatStore(path)
    with pytest.raises(StoreError, match="Move the file away"):
        await store.list()
    await store.close()


async def test_old_json_conversations_are_imported_once(tmp_path: Path, allow_logs) -> None:
    folder = tmp_path / "conversations"
    folder.mkdir()
    (folder / "old1.json").write_text(
        json.dumps(
            {
                "format": 1,
                "id": "old1",
                "title": "tidy the docs",
                "parent": None,
                "updated": 50.0,
                "active_tools": ["fs__list_dir"],
                "messages": [
                    {"role": "user", "content": "list the docs folder"},
                    {"role": "assistant", "content": [{"type": "text", "text": "Done."}]},
                ],
            }
        )
    )
    (folder / "broken.json").write_text("{not json")
    allow_logs(r"broken\.json: not a readable conversation")
    store = ChatStore(tmp_path / "c.sqlite3")
    assert await store.import_json_once(folder) == 1
    stored = await store.load("old1")
    assert stored.active_tools == ["fs__list_dir"] and stored.title == "tidy the docs"
    assert [m.text for m in stored.messages] == ["list the docs folder", "Done."]
    assert stored.messages[1].parent_id == stored.messages[0].id
    assert await store.import_json_once(folder) == 0  # once
    await store.delete("old1")
    assert await store.import_json_once(folder) == 0  # a deleted one does not come back
    await store.close()


async def test_a_version_1_database_is_migrated_and_keeps_its_messages(tmp_path: Path) -> None:
    from portico.chat import schema

    path = tmp_path / "c.sqlite3"
    conn = sqlite3.connect(path, isolation_level=None)
    for statement in schema._statements(schema.MIGRATIONS[0]):
        conn.execute(statement)
    conn.execute("PRAGMA user_version = 1")
    conn.execute(
        "INSERT INTO conversations (id, title, created, updated) VALUES ('old', 'Old one', 1, 1)"
    )
    conn.execute(
        "INSERT INTO messages (id, conversation_id, role, text, created) VALUES "
        "('m1', 'old', 'user', 'searchable history', 1)"
    )
    conn.close()
    store = ChatStore(path)
    assert [h.message_id for h in await store.search("searcha")] == ["m1"]
    assert (await store.load("old")).messages[0].text == "searchable history"
    await store.close()
    with sqlite3.connect(path) as check:
        assert check.execute("PRAGMA user_version").fetchone()[0] == schema.VERSION == 6
