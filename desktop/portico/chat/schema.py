"""The chat database's schema and its migrations (``PRAGMA user_version``).

Each migration takes the database from version N-1 to N inside one transaction. A
database written by a newer Portico is refused, never rewritten.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

_V1 = """
CREATE TABLE conversations (
    id TEXT PRIMARY KEY,
    title TEXT NOT NULL DEFAULT '',
    created REAL NOT NULL,
    updated REAL NOT NULL,
    model TEXT,
    parent_id TEXT,
    leaf_id TEXT,
    yolo INTEGER NOT NULL DEFAULT 0,
    active_tools TEXT NOT NULL DEFAULT '[]',
    spend TEXT NOT NULL DEFAULT '{}',
    input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX conversations_updated ON conversations(updated);
CREATE TABLE messages (
    id TEXT PRIMARY KEY,
    conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    parent_id TEXT,
    seq INTEGER NOT NULL DEFAULT 0,
    role TEXT NOT NULL,
    text TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL DEFAULT 'complete',
    model TEXT,
    error TEXT,
    created REAL NOT NULL,
    input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    attachments TEXT NOT NULL DEFAULT '[]',
    rounds TEXT NOT NULL DEFAULT '[]'
);
CREATE INDEX messages_conversation ON messages(conversation_id);
CREATE TABLE tool_calls (
    id TEXT NOT NULL,
    message_id TEXT NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
    conversation_id TEXT NOT NULL,
    seq INTEGER NOT NULL DEFAULT 0,
    name TEXT NOT NULL,
    arguments TEXT NOT NULL DEFAULT '{}',
    raw_arguments TEXT NOT NULL DEFAULT '',
    outcome TEXT,
    result_text TEXT NOT NULL DEFAULT '',
    result_images TEXT NOT NULL DEFAULT '[]',
    is_error INTEGER NOT NULL DEFAULT 0,
    duration REAL NOT NULL DEFAULT 0,
    PRIMARY KEY (message_id, id)
);
CREATE INDEX tool_calls_conversation ON tool_calls(conversation_id);
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
CREATE VIRTUAL TABLE messages_fts USING fts5(
    text, content='messages', content_rowid='rowid', tokenize='unicode61 remove_diacritics 2'
);
CREATE TRIGGER messages_ai AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts(rowid, text) VALUES (new.rowid, new.text);
END;
CREATE TRIGGER messages_ad AFTER DELETE ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
END;
CREATE TRIGGER messages_au AFTER UPDATE OF text ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
    INSERT INTO messages_fts(rowid, text) VALUES (new.rowid, new.text);
END;
"""

# v2: a prefix index (2-4 characters), so "find as you type" searches stay fast.
_V2 = """
DROP TRIGGER messages_ai;
DROP TRIGGER messages_ad;
DROP TRIGGER messages_au;
DROP TABLE messages_fts;
CREATE VIRTUAL TABLE messages_fts USING fts5(
    text, content='messages', content_rowid='rowid',
    tokenize='unicode61 remove_diacritics 2', prefix='2 3 4'
);
INSERT INTO messages_fts(messages_fts) VALUES ('rebuild');
CREATE TRIGGER messages_ai AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts(rowid, text) VALUES (new.rowid, new.text);
END;
CREATE TRIGGER messages_ad AFTER DELETE ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
END;
CREATE TRIGGER messages_au AFTER UPDATE OF text ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
    INSERT INTO messages_fts(rowid, text) VALUES (new.rowid, new.text);
END;
"""

# v3: no per-row insert/update triggers (they cost ~10x the row's own insert); the store
# keeps the index in bulk per batch (portico.chat.fts_index: the index holds exactly
# (rowid, text) of every message row, as v2's triggers and 'rebuild' left it). Deletes
# keep their trigger (messages_ad, unchanged).
_V3 = """
DROP TRIGGER messages_ai;
DROP TRIGGER messages_au;
"""

# v4: the chat list's pins, archive and deleted chats kept for an undo (``deleted``: when,
# NULL for a chat that is not deleted). Added columns only: every row stays as it was.
_V4 = """
ALTER TABLE conversations ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0;
ALTER TABLE conversations ADD COLUMN archived INTEGER NOT NULL DEFAULT 0;
ALTER TABLE conversations ADD COLUMN deleted REAL;
"""

# v5: each chat's own model settings (system prompt, temperature, max tokens, reasoning)
# and what its requests leave out (``context``: the first message sent, a summary), as JSON
# in a table of their own so the conversations rows stay as they were; they go when their
# conversation goes.
_V5 = """
CREATE TABLE chat_settings (
    conversation_id TEXT PRIMARY KEY,
    settings TEXT NOT NULL DEFAULT '{}',
    context TEXT NOT NULL DEFAULT '{}'
);
CREATE TRIGGER chat_settings_ad AFTER DELETE ON conversations BEGIN
    DELETE FROM chat_settings WHERE conversation_id = old.id;
END;
"""

# v6: the view (``ui://``) a tool call's tool declared when it returned, NULL for none.
_V6 = """
ALTER TABLE tool_calls ADD COLUMN view_uri TEXT;
"""

MIGRATIONS: tuple[str, ...] = (_V1, _V2, _V3, _V4, _V5, _V6)
VERSION = len(MIGRATIONS)


def migrate(conn: sqlite3.Connection, path: Path) -> None:
    from portico.chat.store import StoreError

    current = conn.execute("PRAGMA user_version").fetchone()[0]
    if current > VERSION:
        raise StoreError(
            f"{path}: written by a newer Portico (schema {current}, this one reads up to "
            f"{VERSION}); update Portico to open your chats"
        )
    for version in range(current + 1, VERSION + 1):
        conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in _statements(MIGRATIONS[version - 1]):
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {version}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise


def _statements(script: str) -> list[str]:
    """Split a migration into statements (triggers keep their inner semicolons)."""
    out: list[str] = []
    buffer = ""
    for line in script.strip().splitlines():
        buffer += line + "\n"
        if sqlite3.complete_statement(buffer):
            out.append(buffer.strip())
            buffer = ""
    if buffer.strip():
        out.append(buffer.strip())
    return out
