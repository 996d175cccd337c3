"""Importing the JSON conversations of earlier versions (``<state dir>/conversations``),
once: the import is recorded in the database's ``meta`` table, and the files stay where
they were (nothing is deleted)."""

from __future__ import annotations

import json
import logging
import sqlite3
import time
import uuid
from pathlib import Path
from typing import Any

from portico.chat import fts_index

log = logging.getLogger(__name__)
MARKER = "json_import"


def _text_of(message: dict[str, Any]) -> str:
    content = message.get("content", message.get("text", ""))
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return str(content)


def import_folder(conn: sqlite3.Connection, folder: Path) -> int:
    done = conn.execute("SELECT value FROM meta WHERE key=?", (MARKER,)).fetchone()
    if done is not None:
        return 0
    count = 0
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if int(data.get("format", 1)) > 1:
                log.warning("%s: written by a newer Portico; not imported", path)
                continue
            conversation_id = str(data["id"])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.warning("%s: not a readable conversation, not imported (%s)", path, exc)
            continue
        exists = conn.execute(
            "SELECT 1 FROM conversations WHERE id=?", (conversation_id,)
        ).fetchone()
        if exists:
            continue
        updated = float(data.get("updated") or time.time())
        parent: str | None = None
        rows = []
        for i, message in enumerate(data.get("messages") or []):
            if not isinstance(message, dict):
                continue
            role = message.get("role")
            if role not in ("user", "assistant"):
                continue
            message_id = uuid.uuid4().hex
            rows.append((message_id, conversation_id, parent, i, role, _text_of(message), updated))
            parent = message_id
        conn.execute(
            "INSERT INTO conversations (id, title, created, updated, parent_id, leaf_id, "
            "active_tools) VALUES (?,?,?,?,?,?,?)",
            (
                conversation_id,
                str(data.get("title") or ""),
                updated,
                updated,
                data.get("parent"),
                parent,
                json.dumps([str(n) for n in data.get("active_tools") or []]),
            ),
        )
        conn.executemany(
            "INSERT INTO messages (id, conversation_id, parent_id, seq, role, text, created) "
            "VALUES (?,?,?,?,?,?,?)",
            rows,
        )
        fts_index.index_new(conn, (row[0] for row in rows))
        count += 1
    conn.execute("INSERT INTO meta (key, value) VALUES (?, ?)", (MARKER, str(time.time())))
    if count:
        log.info("imported %d conversation(s) from %s", count, folder)
    return count
