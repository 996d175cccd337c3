"""The chat's tool calls that became tasks (tasks extension), in the chat database.

One row per call (``chat_tasks``: conversation, message, call, server, tool, task id,
created, last status), so a conversation opened after a restart shows the task on its
tool card and can fetch the result (``ChatHost.fetch_task``). The table is created on
first use, beside the chat store's own schema, and goes with its conversation.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass
from typing import Final

from portico.chat.store import ChatStore
from portico.runtime.task_events import ENDED

_TABLE: Final = """
CREATE TABLE IF NOT EXISTS chat_tasks (
    call_id TEXT NOT NULL,
    message_id TEXT NOT NULL,
    conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    server TEXT NOT NULL,
    tool TEXT NOT NULL,
    task_id TEXT NOT NULL,
    created REAL NOT NULL,
    status TEXT NOT NULL,
    message TEXT,
    updated REAL NOT NULL,
    PRIMARY KEY (message_id, call_id)
)
"""
_UPSERT: Final = (
    "INSERT INTO chat_tasks (call_id, message_id, conversation_id, server, tool, task_id, "
    "created, status, message, updated) VALUES (?,?,?,?,?,?,?,?,?,?) "
    "ON CONFLICT(message_id, call_id) DO UPDATE SET task_id=excluded.task_id, "
    "status=excluded.status, message=excluded.message, updated=excluded.updated"
)
_COLUMNS: Final = (
    "call_id, message_id, conversation_id, server, tool, task_id, created, status, message, updated"
)


@dataclass(frozen=True)
class ChatTask:
    call_id: str
    message_id: str
    conversation_id: str
    server: str
    tool: str
    task_id: str
    created: float
    status: str
    message: str | None = None
    updated: float = 0.0

    @property
    def ended(self) -> bool:
        return self.status in ENDED


class ChatTasks:
    def __init__(self, store: ChatStore) -> None:
        self.store = store
        self._ready = False

    def _ensure(self, conn: sqlite3.Connection) -> None:
        if not self._ready:
            conn.execute(_TABLE)
            self._ready = True

    def record(self, task: ChatTask) -> None:
        """Write one call's task state (queued, off the loop)."""
        row = (
            task.call_id,
            task.message_id,
            task.conversation_id,
            task.server,
            task.tool,
            task.task_id,
            task.created,
            task.status,
            task.message,
            task.updated or time.time(),
        )

        def job(conn: sqlite3.Connection) -> None:
            self._ensure(conn)
            conn.execute(_UPSERT, row)

        self.store.write(job)

    async def of_conversation(self, conversation_id: str) -> dict[str, ChatTask]:
        """The conversation's tasks by call id."""

        def job(conn: sqlite3.Connection) -> list[tuple[object, ...]]:
            self._ensure(conn)
            query = f"SELECT {_COLUMNS} FROM chat_tasks WHERE conversation_id=?"
            return list(conn.execute(query, (conversation_id,)))

        rows = await self.store.read(job)
        tasks = [ChatTask(*row) for row in rows]  # type: ignore[arg-type]
        return {t.call_id: t for t in tasks}


def updated(
    old: ChatTask | None,
    *,
    conversation_id: str,
    message_id: str,
    call_id: str,
    server: str,
    tool: str,
    task_id: str,
    status: str,
    message: str | None,
) -> ChatTask:
    """The row after one observed state (created keeps the first sighting's time)."""
    now = time.time()
    return ChatTask(
        call_id=call_id,
        message_id=message_id,
        conversation_id=conversation_id,
        server=server,
        tool=tool,
        task_id=task_id,
        created=old.created if old is not None else now,
        status=status,
        message=message,
        updated=now,
    )
