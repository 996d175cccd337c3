"""Keeping the full-text index ``messages_fts`` in step with the ``messages`` rows.

The invariant (schema v3): **the index holds exactly (rowid, text) of every message row**,
empty texts included (FTS5's ``integrity-check`` against the content table wants a
document for every content row, and ``rebuild`` makes one). An external-content FTS5
table trusts what it is told: a 'delete' with values that were never indexed, or a
second insert for an indexed rowid, corrupts it silently. So:

- a delete trigger (``messages_ad``) removes a row's entry with its old text (deletes are
  rare and cascade from ``conversations``; a rowid left in the index would match a later
  row that reuses it);
- every insert or text change goes through this module, in bulk, in the transaction that
  writes the rows: :func:`before` reads the old (rowid, text) of the batch's rows before
  the upserts, :func:`after` indexes the rows that are new and re-indexes those whose text
  changed, and leaves alone rows whose text stayed (status, token and round updates: most
  of a turn's writes).

Per-row triggers cost ~45-55 µs a message row here against ~12-16 µs a row for one
set-based statement per batch (see ``docs/platform-notes.md``, "SQLite").
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

_OLD = "SELECT id, rowid, text FROM messages WHERE id IN (SELECT value FROM json_each(?))"
_INDEX_IDS = (
    "INSERT INTO messages_fts(rowid, text) SELECT rowid, text FROM messages "
    "WHERE id IN (SELECT value FROM json_each(?))"
)
_NOW = "SELECT rowid, text FROM messages WHERE rowid IN (SELECT value FROM json_each(?))"
_INDEX = "INSERT INTO messages_fts(rowid, text) VALUES (?, ?)"
_UNINDEX = "INSERT INTO messages_fts(messages_fts, rowid, text) VALUES ('delete', ?, ?)"


@dataclass(frozen=True)
class Before:
    """A batch's message rows as they were before it: what :func:`after` needs."""

    texts: Mapping[str, object]  # message id -> the text the batch writes
    old: Mapping[str, tuple[int, str]]  # message id -> (rowid, text) of the rows that exist


def before(conn: sqlite3.Connection, texts: Mapping[str, object]) -> Before:
    """Read, in the batch's transaction and before its upserts, the indexed state of the
    rows it writes (``texts``: message id -> new text)."""
    if not texts:
        return Before(texts, {})
    rows = conn.execute(_OLD, (json.dumps(list(texts)),))
    return Before(texts, {r[0]: (r[1], r[2]) for r in rows})


def after(conn: sqlite3.Connection, state: Before) -> None:
    """Bring the index up to date after the upserts. Reads the new text from the table,
    so a row the row-by-row fallback lost (or kept unchanged) is indexed as it stands."""
    if not state.texts:
        return
    if len(state.old) < len(state.texts):
        index_new(conn, (i for i in state.texts if i not in state.old))
    changed = [old for i, old in state.old.items() if state.texts[i] != old[1]]
    if changed:
        conn.executemany(_UNINDEX, changed)
        # not INSERT ... SELECT here: after a 'delete' of the same rowid it costs ~5x
        # (~1 ms for a 16 kB streamed answer; see docs/platform-notes.md, "SQLite")
        now = conn.execute(_NOW, (json.dumps([rowid for rowid, _ in changed]),))
        conn.executemany(_INDEX, now.fetchall())


def index_new(conn: sqlite3.Connection, message_ids: Iterable[str]) -> None:
    """Index rows just inserted (ids that had no row, hence no entry, before); an id
    without a row now (its insert failed) is skipped."""
    ids = list(message_ids)
    if ids:
        conn.execute(_INDEX_IDS, (json.dumps(ids),))
