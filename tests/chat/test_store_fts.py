"""The full-text index without per-row triggers (schema v3): the store keeps
``messages_fts`` holding exactly (rowid, text) of every message row, through saves,
streamed text, deletes, bad rows and the v2 -> v3 migration. FTS5's own integrity check
(against the content table) and a brute-force search over the rows are the judges."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import sqlite3
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from portico.chat import schema
from portico.chat.messages import Message
from portico.chat.store import _MESSAGE_SQL, ChatStore, StoredConversation, StoreError, _message_row

WORDS = ["alpha", "alpine", "beta", "bet", "gamma", "Gamut", "delta"]
QUERIES = [
    "al",
    "alp",
    "alpha",
    "alpine",
    "be",
    "bet",
    "beta",
    "gam",
    "GAMMA",
    "delta",
    "alpha be",
    "beta gam",
    "bet alpha delta",
    "zzz",
]
CHECK = "INSERT INTO messages_fts(messages_fts, rank) VALUES ('integrity-check', 1)"


def _brute(rows: list[tuple[str, str]], query: str) -> set[str]:
    """What ChatStore.search promises: words ANDed, the last one a prefix, any case."""
    words = query.lower().split()
    found = set()
    for message_id, text in rows:
        tokens = text.lower().split()
        if all(w in tokens for w in words[:-1]) and any(t.startswith(words[-1]) for t in tokens):
            found.add(message_id)
    return found


async def _check(store: ChatStore) -> None:
    def job(conn: sqlite3.Connection) -> list[tuple[str, str]]:
        conn.execute(CHECK)  # raises "database disk image is malformed" when inconsistent
        return list(conn.execute("SELECT id, text FROM messages"))

    rows = await store.read(job)
    for query in QUERIES:
        hits = await store.search(query, limit=1000)
        assert {h.message_id for h in hits if h.message_id} == _brute(rows, query), query


def _text(draw_words: list[int]) -> str:
    return " ".join(WORDS[i] for i in draw_words)


texts = st.lists(st.integers(0, len(WORDS) - 1), max_size=4).map(_text)
ops = st.lists(
    st.one_of(
        st.tuples(st.just("conv"), st.integers(0, 2)),
        st.tuples(
            st.just("save"),
            st.integers(0, 2),
            st.integers(0, 3),
            texts,
            st.sampled_from(["streaming", "complete", "error"]),
        ),
        st.tuples(st.just("status"), st.integers(0, 3), st.sampled_from(["complete", "error"])),
        st.tuples(st.just("stream"), st.integers(0, 3), texts),
        st.tuples(st.just("bad_insert"), st.integers(0, 3)),
        st.tuples(st.just("bad_update"), st.integers(0, 3)),
        st.tuples(st.just("bad_stream"), st.integers(0, 3)),
        st.tuples(st.just("delete_message"), st.integers(0, 3)),
        st.tuples(st.just("delete_conversation"), st.integers(0, 2)),
        st.tuples(st.just("flush")),
        st.tuples(st.just("flush")),
    ),
    min_size=4,
    max_size=40,
)
_files = itertools.count()


async def _run(path: Path, steps: list[tuple[Any, ...]]) -> None:
    store = ChatStore(path, write_delay=600)  # a batch goes out at a flush or a read only
    messages: dict[int, tuple[str, Message]] = {}  # one object per message, as a Chat keeps
    for c in range(3):
        store.save_conversation(StoredConversation(id=f"c{c}"))
    for step in [*steps, ("flush",)]:
        kind = step[0]
        if kind == "conv":
            store.save_conversation(StoredConversation(id=f"c{step[1]}"))
        elif kind == "save":
            _, c, m, text, status = step
            conversation, message = messages.setdefault(
                m, (f"c{c}", Message(f"m{m}", "assistant", "", status="streaming"))
            )
            message.text, message.status = text, status
            store.save_message(conversation, message)
        elif kind == "status" and step[1] in messages:
            conversation, message = messages[step[1]]
            message.status, message.output_tokens = step[2], message.output_tokens + 1
            store.save_message(conversation, message)
        elif kind == "stream" and step[1] in messages:
            _, message = messages[step[1]]
            message.text = step[2]
            store.save_text(message.id, message.text, "streaming")
        elif kind == "bad_insert":  # no such conversation: the batch falls back row by row
            store.save_message("nowhere", Message(f"bad{step[1]}", "user", "alpha beta"))
        elif kind == "bad_update":  # text NOT NULL: an existing row's update fails
            conversation = messages[step[1]][0] if step[1] in messages else "c0"
            store.save_message(conversation, Message(f"m{step[1]}", "user", None))  # type: ignore[arg-type]
        elif kind == "bad_stream":
            store.save_text(f"m{step[1]}", None, "streaming")  # type: ignore[arg-type]
        elif kind == "delete_message":
            message_id = f"m{step[1]}"
            store.write(
                lambda conn, i=message_id: conn.execute("DELETE FROM messages WHERE id=?", (i,))
            )
        elif kind == "delete_conversation":
            with contextlib.suppress(StoreError):  # deleted already
                await store.delete(f"c{step[1]}")  # out of the search at once, then gone
                await store.purge(f"c{step[1]}")
            await _check(store)
        elif kind == "flush":
            await store.flush()
            await _check(store)
    await store.close()


@settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(steps=ops)
def test_the_index_follows_every_write(tmp_path: Path, allow_logs, steps) -> None:
    allow_logs(r"a chat store write failed: (FOREIGN KEY|NOT NULL) constraint failed")
    asyncio.run(_run(tmp_path / f"chats{next(_files)}.sqlite3", steps))


async def test_a_batch_with_a_bad_row_keeps_the_index_exact(tmp_path: Path, allow_logs) -> None:
    """The row-by-row fallback: a new row, a changed row and an unchanged row beside two
    bad ones; the good ones are indexed as written, the bad ones not at all."""
    allow_logs(r"a chat store write failed: (FOREIGN KEY|NOT NULL) constraint failed")
    store = ChatStore(tmp_path / "c.sqlite3", write_delay=600)
    store.save_conversation(StoredConversation(id="c1"))
    kept, changed = Message("m1", "user", "alpha kept"), Message("m2", "assistant", "beta old")
    store.save_many("c1", [kept, changed, Message("m3", "user", "gamma lost")])
    await store.flush()
    changed.text = "beta new"
    kept.status = "error"
    store.save_many("c1", [kept, changed, Message("m4", "user", "delta fresh")])
    store.save_message("nowhere", Message("bad", "user", "alpha beta gamma delta"))
    store.save_message("c1", Message("m3", "user", None))  # type: ignore[arg-type]
    await store.flush()
    await _check(store)
    assert {h.message_id for h in await store.search("gamma")} == {"m3"}  # kept its old text
    assert {h.message_id for h in await store.search("new")} == {"m2"}
    assert await store.search("old") == []
    assert {h.message_id for h in await store.search("alpha")} == {"m1"}
    await store.close()


async def test_writes_that_keep_the_text_leave_the_index_alone(tmp_path: Path) -> None:
    store = ChatStore(tmp_path / "c.sqlite3", write_delay=600)
    store.save_conversation(StoredConversation(id="c1"))
    answer = Message("a1", "assistant", "the answer", status="streaming")
    store.save_message("c1", answer)
    await store.flush()
    statements: list[str] = []
    await store.read(lambda conn: conn.set_trace_callback(statements.append))
    answer.status, answer.output_tokens = "complete", 42  # what most of a turn's writes do
    store.save_message("c1", answer)
    store.save_conversation(StoredConversation(id="c1", title="t"))
    await store.flush()
    await store.read(lambda conn: conn.set_trace_callback(None))
    assert any("INSERT INTO messages" in s for s in statements)  # the upsert did run
    assert not [s for s in statements if "messages_fts" in s]
    statements.clear()
    await store.read(lambda conn: conn.set_trace_callback(statements.append))
    store.save_text("a1", "the answer, longer", "streaming")
    await store.flush()
    await store.read(lambda conn: conn.set_trace_callback(None))
    assert [s for s in statements if "messages_fts" in s]  # a changed text is re-indexed
    await _check(store)
    await store.close()


def _v2_database(path: Path) -> None:
    """A database as the v2 schema (per-row triggers) wrote it, with real rows: inserts,
    text updates through the store's own upsert, and a delete."""
    conn = sqlite3.connect(path, isolation_level=None)
    for migration in schema.MIGRATIONS[:2]:
        for statement in schema._statements(migration):
            conn.execute(statement)
    conn.execute("PRAGMA user_version = 2")
    conn.execute(
        "INSERT INTO conversations (id, title, created, updated) VALUES "
        "('c1', 'Trip', 1, 1), ('c2', '', 2, 2)"
    )
    rows = [
        _message_row("c1", 0, Message("m1", "user", "plan the alpine trip")),
        _message_row("c1", 0, Message("m2", "assistant", "")),
        _message_row("c2", 0, Message("m3", "user", "beta release notes")),
        _message_row("c2", 0, Message("m4", "assistant", "gamma rays")),
    ]
    conn.executemany(_MESSAGE_SQL, rows)
    conn.execute(
        _MESSAGE_SQL,
        _message_row("c1", 0, Message("m2", "assistant", "alpine huts along the route")),
    )
    conn.execute("DELETE FROM messages WHERE id='m4'")
    conn.close()


def _raw_search(conn: sqlite3.Connection, match: str) -> list[str]:
    return [
        r[0]
        for r in conn.execute(
            "SELECT m.id FROM messages_fts f JOIN messages m ON m.rowid = f.rowid "
            "WHERE messages_fts MATCH ? ORDER BY f.rank, m.id",
            (match,),
        )
    ]


async def test_a_version_2_database_is_migrated_with_its_index(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite3"
    _v2_database(path)
    matches = ['"alp"*', '"alpine"*', '"beta"*', '"gamma"*', '"route"*', '"trip"*', '"plan"']
    with sqlite3.connect(path) as conn:
        before = {m: _raw_search(conn, m) for m in matches}
    assert sorted(before['"alpine"*']) == ["m1", "m2"] and before['"gamma"*'] == []
    store = ChatStore(path)
    after = await store.read(lambda conn: {m: _raw_search(conn, m) for m in matches})
    assert after == before
    assert {h.message_id for h in await store.search("alpine")} == {"m1", "m2"}
    assert {h.message_id for h in await store.search("be")} == {"m3"}
    await _check(store)
    store.save_message("c2", Message("m5", "user", "gamma again"))  # v3 writes on a v2 file
    store.save_message("c1", Message("m2", "assistant", "huts only"))
    await store.flush()
    await _check(store)
    assert {h.message_id for h in await store.search("alpine")} == {"m1"}
    assert {h.message_id for h in await store.search("gamma")} == {"m5"}
    await store.close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == schema.VERSION == 6
        triggers = [
            r[0]
            for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type='trigger' AND tbl_name='messages'"
            )
        ]
        assert triggers == ["messages_ad"]  # the messages' only trigger (v3 dropped the rest)


async def test_imported_json_conversations_are_indexed(tmp_path: Path) -> None:
    folder = tmp_path / "conversations"
    folder.mkdir()
    (folder / "old1.json").write_text(
        json.dumps(
            {
                "format": 1,
                "id": "old1",
                "title": "",
                "updated": 50.0,
                "messages": [
                    {"role": "user", "content": "list the docs folder"},
                    {"role": "assistant", "content": ""},
                    {"role": "user", "content": [{"type": "text", "text": "docs again"}]},
                ],
            }
        )
    )
    store = ChatStore(tmp_path / "c.sqlite3")
    store.save_conversation(StoredConversation(id="c1"))
    store.save_message("c1", Message("m1", "user", "docs elsewhere"))
    assert await store.import_json_once(folder) == 1
    await _check(store)
    hits = await store.search("docs")
    assert sorted(h.conversation_id for h in hits) == ["c1", "old1", "old1"]
    await store.close()
