"""Conversations in SQLite under the state dir: ``<state dir>/chats.sqlite3``.

stdlib ``sqlite3`` in WAL mode; every write goes through one writer thread, so the event
loop never waits on the disk and writes keep their order. Written as they happen (a
message row when a turn starts, its text at round ends and every ~0.5 s while streaming,
each tool call when it starts and ends), so a kill -9 loses at most the text streamed
since the last flush. The schema is versioned (``PRAGMA user_version``) with forward
migrations; a newer database than this Portico knows is refused, never rewritten. Old
JSON conversations (``<state dir>/conversations/*.json``) are imported once.

The read methods are async (they run on the writer thread, after pending writes).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from portico.chat.messages import ConversationSummary, SearchHit

ExportFormat = Literal["md", "json"]


class StoreError(Exception):
    """The database cannot be opened or read; the message names the file and what to do."""


class ChatStore:
    def __init__(self, path: Path | None = None) -> None:
        """``path`` default: ``<state dir>/chats.sqlite3`` (opened on first use)."""
        raise NotImplementedError

    @property
    def path(self) -> Path:
        raise NotImplementedError

    async def list(self, limit: int | None = None) -> list[ConversationSummary]:
        """Newest first (by last change)."""
        raise NotImplementedError

    async def search(self, query: str, limit: int = 50) -> list[SearchHit]:
        """FTS5 over message text and titles; words are ANDed, the last one is a prefix."""
        raise NotImplementedError

    async def rename(self, conversation_id: str, title: str) -> None:
        raise NotImplementedError

    async def delete(self, conversation_id: str) -> None:
        """Remove it with its messages and tool calls (branches of it stay, unlinked)."""
        raise NotImplementedError

    async def export(self, conversation_id: str, format: ExportFormat = "md") -> str:
        """The shown branch as Markdown (for people) or JSON (every message, tool call and
        result, the whole tree)."""
        raise NotImplementedError

    async def resolve_id(self, prefix: str) -> str:
        """A full id from a unique prefix; StoreError naming the candidates otherwise."""
        raise NotImplementedError

    async def close(self) -> None:
        """Write what is pending and close the database."""
        raise NotImplementedError
