"""Edit and regenerate make branches: the store keeps the tree (parent ids), a reload and
an old store file bring every branch back, branch N is stable, and the model reads only
the branch shown."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from portico.chat import schema
from portico.chat.conversation import ChatError
from portico.chat.messages import Message
from portico.chat.tree import branches
from tests.chat.conftest import chat_setup, collect, provider
from tests.servers.model_server import text


def _m(mid: str, role: str, parent: str | None) -> Message:
    return Message(mid, role, mid, parent_id=parent)  # type: ignore[arg-type]


def test_branch_numbers_follow_the_order_versions_were_made() -> None:
    q1, a1 = _m("q1", "user", None), _m("a1", "assistant", "q1")
    q2, a2 = _m("q2", "user", "a1"), _m("a2", "assistant", "q2")
    a2b = _m("a2b", "assistant", "q2")  # a regenerated answer: branch 2
    q1b, a1b = _m("q1b", "user", None), _m("a1b", "assistant", "q1b")  # an edit: branch 3
    a2c = _m("a2c", "assistant", "q2")  # regenerated again: branch 4
    tree = [q1, a1, q2, a2, a2b, q1b, a1b, a2c]
    assert [m.id for m in branches(tree)] == ["a2", "a2b", "a1b", "a2c"]
    # continuing branch 3 moves its leaf and changes no number
    q3 = _m("q3", "user", "a1b")
    assert [m.id for m in branches([*tree, q3])] == ["a2", "a2b", "q3", "a2c"]
    assert branches([]) == []


async def _three_branches(s, models):  # type: ignore[no-untyped-def]
    models.script(text("First answer."), text("Second answer."), text("Answer to the edit."))
    chat = await s.host.new()
    await collect(chat.send("question"))
    await collect(chat.regenerate())
    question = chat.messages[0]
    await collect(chat.edit(question.id, "better question"))
    return chat, question


@pytest.mark.slow
async def test_the_tree_is_stored_switched_and_reloaded(models, tmp_path: Path) -> None:
    store = tmp_path / "chats.sqlite3"
    async with chat_setup(providers=(provider(models),), store_path=store) as s:
        chat, question = await _three_branches(s, models)
        assert [m.text for m in chat.messages] == ["better question", "Answer to the edit."]
        assert chat.branch == 3 and len(chat.branches()) == 3
        await chat.switch_branch(1)
        assert [m.text for m in chat.messages] == ["question", "First answer."]
        await chat.switch_branch(2)
        assert [m.text for m in chat.messages] == ["question", "Second answer."]
        with pytest.raises(ChatError, match="has 3 branches: pick a number from 1 to 3"):
            await chat.switch_branch(4)
        chat_id = chat.id
    # a new process: every message and the branch shown come back from the file
    async with chat_setup(providers=(provider(models),), store_path=store) as s:
        again = await s.host.open(chat_id)
        assert [m.text for m in again.messages] == ["question", "Second answer."]
        assert again.branch == 2
        assert len(again.siblings(question.id)) == 2
        assert [m.text for m in again.branches()] == [
            "First answer.",
            "Second answer.",
            "Answer to the edit.",
        ]
    with sqlite3.connect(store) as conn:
        parents = dict(conn.execute("SELECT text, parent_id FROM messages"))
        ids = dict(conn.execute("SELECT text, id FROM messages"))
    assert parents["question"] is None and parents["better question"] is None
    assert parents["First answer."] == parents["Second answer."] == ids["question"]
    assert parents["Answer to the edit."] == ids["better question"]


@pytest.mark.slow
async def test_the_model_reads_only_the_branch_shown(models) -> None:
    async with chat_setup(providers=(provider(models),)) as s:
        chat, _question = await _three_branches(s, models)
        edited = models.requests[-1].body["messages"]
        assert [m["content"] for m in edited if m["role"] != "system"] == ["better question"]
        assert "answer." not in json.dumps(edited)
        await chat.switch_branch(1)
        models.script(text("Going on."))
        await collect(chat.send("and then?"))
        sent = [(m["role"], m["content"]) for m in models.requests[-1].body["messages"]]
        assert sent[1:] == [
            ("user", "question"),
            ("assistant", "First answer."),
            ("user", "and then?"),
        ]
        # the new message continued branch 1: the numbers stay
        assert chat.branch == 1 and [m.text for m in chat.branches()][1:] == [
            "Second answer.",
            "Answer to the edit.",
        ]


async def test_an_old_store_file_keeps_every_branch(tmp_path: Path) -> None:
    """A database written by an earlier Portico (schema 1) with a regenerated answer opens
    migrated, with both answers and the branch that was shown."""
    path = tmp_path / "chats.sqlite3"
    conn = sqlite3.connect(path, isolation_level=None)
    for statement in schema._statements(schema.MIGRATIONS[0]):
        conn.execute(statement)
    conn.execute("PRAGMA user_version = 1")
    conn.execute(
        "INSERT INTO conversations (id, title, created, updated, leaf_id) VALUES "
        "('old', 'Old chat', 1, 1, 'a1')"
    )
    rows = [
        ("q", None, "user", "old question"),
        ("a1", "q", "assistant", "old answer"),
        ("a2", "q", "assistant", "newer answer"),
    ]
    for i, (mid, parent, role, body) in enumerate(rows):
        conn.execute(
            "INSERT INTO messages (id, conversation_id, parent_id, role, text, created) "
            "VALUES (?, 'old', ?, ?, ?, ?)",
            (mid, parent, role, body, i),
        )
    conn.close()
    async with chat_setup(store_path=path) as s:
        chat = await s.host.open("old")
        assert chat.title == "Old chat"
        assert [m.text for m in chat.messages] == ["old question", "old answer"]
        assert chat.branch == 1 and chat.siblings("a1") == ["a1", "a2"]
        assert chat.versions() == {"a1": ["a1", "a2"], "a2": ["a1", "a2"]}  # all at once
        await chat.switch_to("a2")
        assert [m.text for m in chat.messages] == ["old question", "newer answer"]
        assert [h.message_id for h in await s.host.store.search("newer")] == ["a2"]
    with sqlite3.connect(path) as check:
        assert check.execute("PRAGMA user_version").fetchone()[0] == schema.VERSION
        assert check.execute("SELECT leaf_id FROM conversations").fetchone()[0] == "a2"
