"""Conversations in SQLite under the state dir: ``<state dir>/chats.sqlite3``.

stdlib ``sqlite3`` in WAL mode; every statement runs on one writer thread, so the event
loop never waits on the disk and writes keep their order. Written as they happen, in
batches: a save marks its row and the batch made ``WRITE_DELAY`` later writes the newest
state of every marked row in one transaction (``portico.chat.pending_writes``); the
streamed text is saved every ~0.5 s and goes out at once. So a kill -9 loses at most the
text streamed since the last flush, and the changes of the last ``WRITE_DELAY`` (0.1 s).
The full-text index (``messages_fts``) holds exactly (rowid, text) of every message row;
the batch keeps it so in bulk (``portico.chat.fts_index``): new rows are indexed, rows
whose text changed are re-indexed, the others (most writes) leave it alone. Only deletes
go through a trigger (per-row insert/update triggers cost ~10x the row: schema v3 dropped
them; ``docs/platform-notes.md``, "SQLite").
The schema is versioned (``PRAGMA user_version``) with forward
migrations; a newer database than this Portico knows is refused, never rewritten. Old
JSON conversations (``<state dir>/conversations/*.json``) are imported once.

The read methods are async (they run on the writer thread, after pending writes).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import queue
import re
import sqlite3
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

import pydantic_core

from portico.chat import fts_index, schema
from portico.chat.messages import (
    Attachment,
    ConversationSummary,
    Message,
    Round,
    SearchHit,
    ToolCall,
)
from portico.chat.pending_writes import PendingWrites, Rows, write_rows
from portico.paths import paths

log = logging.getLogger(__name__)

ExportFormat = Literal["md", "json"]
SEARCH_WINDOW = 300
# Seconds a save waits for the next batch. Rows saved again meanwhile are written once,
# and the writer thread wakes once per batch instead of several times per tool call.
WRITE_DELAY = 0.1
# A deleted chat is kept this long for an undo (the app's Undo, `portico chat --restore`),
# then removed for good the next time the store opens; the app removes it sooner, when
# its Undo goes away.
KEEP_DELETED = 24 * 3600.0
T = TypeVar("T")


class StoreError(Exception):
    """The database cannot be opened or read; the message names the file and what to do."""


@dataclass
class StoredConversation:
    """Everything a resumed Chat needs back."""

    id: str
    title: str = ""
    created: float = field(default_factory=time.time)
    updated: float = field(default_factory=time.time)
    model: str | None = None
    parent_id: str | None = None
    leaf_id: str | None = None
    yolo: bool = False
    active_tools: list[str] = field(default_factory=list)
    spend: dict[str, float] = field(default_factory=dict)
    past_limit: list[str] = field(default_factory=list)
    model_spend: dict[str, float] = field(default_factory=dict)  # provider -> model cost
    input_tokens: int = 0
    output_tokens: int = 0
    messages: list[Message] = field(default_factory=list)  # the whole tree, oldest first
    settings: dict[str, Any] = field(default_factory=dict)  # portico.chat.settings, as JSON
    # what requests leave out: {"from": first message id sent, "summary": text of the rest}
    context: dict[str, Any] = field(default_factory=dict)


# --- rows <-> objects ---------------------------------------------------------------------


def _json_text(value: Any) -> str:
    """``json.dumps(value, default=str)`` in C (pydantic-core: ~0.9 against ~4 us, and the
    rows of every tool call pass here); compact, UTF-8, read back by ``json.loads``."""
    return pydantic_core.to_json(value, fallback=str).decode()


def _attachments_json(items: list[Attachment]) -> str:
    if not items:
        return "[]"
    return _json_text(
        [
            {
                "kind": a.kind,
                "name": a.name,
                "path": str(a.path) if a.path else None,
                "server": a.server,
                "uri": a.uri,
                "mime_type": a.mime_type,
                "text": a.text,
                "size": a.size,
            }
            for a in items
        ]
    )


def _attachments(text: str | None) -> list[Attachment]:
    out = []
    for a in json.loads(text or "[]"):
        out.append(
            Attachment(
                kind=a["kind"],
                name=a["name"],
                path=Path(a["path"]) if a.get("path") else None,
                server=a.get("server"),
                uri=a.get("uri"),
                mime_type=a.get("mime_type"),
                text=a.get("text"),
                size=a.get("size") or 0,
            )
        )
    return out


def _rounds_json(rounds: list[Round]) -> str:
    if not rounds:
        return "[]"
    out: list[dict[str, Any]] = []
    for r in rounds:
        row: dict[str, Any] = {"text": r.text, "calls": r.tool_call_ids}
        if r.thinking:
            row["thinking"] = r.thinking
        if r.native:
            row["native"] = r.native
            row["native_kind"] = r.native_kind
        out.append(row)
    return _json_text(out)


def _rounds(text: str | None) -> list[Round]:
    return [
        Round(
            r["text"],
            list(r["calls"]),
            str(r.get("thinking") or ""),
            list(r.get("native") or ()),
            str(r.get("native_kind") or ""),
        )
        for r in json.loads(text or "[]")
    ]


def _call_row(conversation_id: str, message_id: str, seq: int, c: ToolCall) -> tuple[Any, ...]:
    return (
        c.id,
        message_id,
        conversation_id,
        seq,
        c.name,
        _json_text(c.arguments),
        c.raw_arguments,
        c.outcome,
        c.result_text,
        _json_text([str(p) for p in c.result_images]) if c.result_images else "[]",
        int(c.is_error),
        c.duration,
        c.view_uri,
    )


_CALL_SQL = (
    "INSERT INTO tool_calls (id, message_id, conversation_id, seq, name, arguments, "
    "raw_arguments, outcome, result_text, result_images, is_error, duration, view_uri) "
    "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(message_id, id) DO UPDATE SET "
    "arguments=excluded.arguments, raw_arguments=excluded.raw_arguments, "
    "outcome=excluded.outcome, result_text=excluded.result_text, "
    "result_images=excluded.result_images, is_error=excluded.is_error, "
    "duration=excluded.duration, view_uri=excluded.view_uri"
)
_MESSAGE_SQL = (
    "INSERT INTO messages (id, conversation_id, parent_id, seq, role, text, status, model, "
    "error, created, input_tokens, output_tokens, attachments, rounds) VALUES "
    "(?,?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(id) DO UPDATE SET text=excluded.text, "
    "status=excluded.status, model=excluded.model, error=excluded.error, "
    "input_tokens=excluded.input_tokens, output_tokens=excluded.output_tokens, "
    "attachments=excluded.attachments, rounds=excluded.rounds"
)


def _message_row(conversation_id: str, seq: int, m: Message) -> tuple[Any, ...]:
    return (
        m.id,
        conversation_id,
        m.parent_id,
        seq,
        m.role,
        m.text,
        m.status,
        m.model,
        m.error,
        m.created,
        m.input_tokens,
        m.output_tokens,
        _attachments_json(m.attachments),
        _rounds_json(m.rounds),
    )


_CONVERSATION_SQL = (
    "INSERT INTO conversations (id, title, created, updated, model, parent_id, leaf_id, yolo, "
    "active_tools, spend, input_tokens, output_tokens) VALUES (?,?,?,?,?,?,?,?,?,?,?,?) "
    "ON CONFLICT(id) DO UPDATE SET title=excluded.title, updated=excluded.updated, "
    "model=excluded.model, leaf_id=excluded.leaf_id, yolo=excluded.yolo, "
    "active_tools=excluded.active_tools, spend=excluded.spend, "
    "input_tokens=excluded.input_tokens, output_tokens=excluded.output_tokens"
)
_TEXT_SQL = "UPDATE messages SET text=?, status=? WHERE id=?"
# the batch runs them in this order: a message row needs its conversation's, a call its
# message's
_UPSERTS = (_CONVERSATION_SQL, _MESSAGE_SQL, _CALL_SQL, _TEXT_SQL)
_CONVERSATIONS, _MESSAGES, _CALLS, _TEXTS = range(4)


def _write_batch(conn: sqlite3.Connection, rows: Rows) -> None:
    """One batch's upserts, with the full-text index kept in step (in bulk)."""
    texts: dict[str, object] = {r[0]: r[5] for r in rows[_MESSAGES]}
    texts.update({r[2]: r[0] for r in rows[_TEXTS]})  # they run after the message rows
    state = fts_index.before(conn, texts)
    write_rows(conn, _UPSERTS, rows)
    fts_index.after(conn, state)


def _conversation_row(c: StoredConversation) -> tuple[Any, ...]:
    return (
        c.id,
        c.title,
        c.created,
        c.updated,
        c.model,
        c.parent_id,
        c.leaf_id,
        int(c.yolo),
        _json_text(c.active_tools),
        _json_text({"totals": c.spend, "past_limit": c.past_limit, "models": c.model_spend}),
        c.input_tokens,
        c.output_tokens,
    )


def _purge(conn: sqlite3.Connection, where: str, args: tuple[Any, ...]) -> int:
    """Remove deleted conversations for good (their messages and calls go with them;
    the chats branched from them stay, unlinked)."""
    ids = [r[0] for r in conn.execute(f"SELECT id FROM conversations WHERE {where}", args)]
    for conversation_id in ids:
        conn.execute(
            "UPDATE conversations SET parent_id=NULL WHERE parent_id=?", (conversation_id,)
        )
        conn.execute("DELETE FROM conversations WHERE id=?", (conversation_id,))
    return len(ids)


def _fts_query(query: str) -> str:
    words = [w for w in query.replace('"', " ").split() if w]
    if not words:
        return ""
    quoted = [f'"{w}"' for w in words]
    quoted[-1] += "*"
    return " ".join(quoted)


def _snippet(text: str, words: list[str], width: int = 12) -> str:
    """About ``width`` words around the first match, matches in [brackets]."""
    tokens = text.split()
    lowered = [re.sub(r"\W+", "", t.lower()) for t in tokens]

    exact, prefix = set(words[:-1]), words[-1] if words else ""

    def hit(token: str) -> bool:  # the query's last word is a prefix, as in the search
        return token in exact or (bool(prefix) and token.startswith(prefix))

    first = next((i for i, t in enumerate(lowered) if hit(t)), 0)
    start = max(0, first - width // 3)
    shown = [
        f"[{tokens[i]}]" if hit(lowered[i]) else tokens[i]
        for i in range(start, min(len(tokens), start + width))
    ]
    head = "…" if start > 0 else ""
    tail = "…" if start + width < len(tokens) else ""
    return head + " ".join(shown) + tail


class _ConversationFill:
    """The conversation row of a batch, made from the object when the batch goes out."""

    __slots__ = ("c", "refresh")

    def __init__(self, c: StoredConversation, refresh: Callable[[], None] | None) -> None:
        self.c = c
        self.refresh = refresh

    def __call__(self, rows: Rows) -> None:
        if self.refresh is not None:
            self.refresh()
        rows[_CONVERSATIONS].append(_conversation_row(self.c))


class _MessageFill:
    """A message row and its tool calls' rows, made when the batch goes out."""

    __slots__ = ("conversation_id", "message")

    def __init__(self, conversation_id: str, message: Message) -> None:
        self.conversation_id = conversation_id
        self.message = message

    def __call__(self, rows: Rows) -> None:
        cid, m = self.conversation_id, self.message
        rows[_MESSAGES].append(_message_row(cid, 0, m))
        if m.tool_calls:
            rows[_CALLS].extend(_call_row(cid, m.id, i, c) for i, c in enumerate(m.tool_calls))


class ChatStore:
    def __init__(self, path: Path | None = None, *, write_delay: float = WRITE_DELAY) -> None:
        """``path`` default: ``<state dir>/chats.sqlite3`` (opened on first use).
        ``write_delay``: seconds a save waits for its batch."""
        self._path = Path(path) if path is not None else paths().state_dir / "chats.sqlite3"
        self._queue: queue.Queue[tuple[Callable[[sqlite3.Connection], Any], Future[Any]] | None]
        self._queue = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._open_error: StoreError | None = None
        self._closed = False
        self._writes = PendingWrites(_UPSERTS, self._submit, write_delay, write=_write_batch)

    @property
    def path(self) -> Path:
        return self._path

    # --- the writer thread ------------------------------------------------------------
    def _start(self) -> None:
        with self._lock:
            if self._thread is not None:
                return
            ready: Future[None] = Future()
            self._thread = threading.Thread(
                target=self._run, args=(ready,), name="chat-store", daemon=True
            )
            self._thread.start()  # opening runs there too: the loop never waits for it

    def _run(self, ready: Future[None]) -> None:
        try:
            conn = self._connect()
        except Exception as exc:  # never leave a caller waiting on a dead thread
            error = (
                exc
                if isinstance(exc, StoreError)
                else StoreError(
                    f"{self._path}: cannot open the chat database ({type(exc).__name__}: {exc})"
                )
            )
            self._open_error = error
            ready.set_result(None)
            self._drain_failed(error)
            return
        ready.set_result(None)
        stop = False
        while not stop:
            batch = [self._queue.get()]
            while True:  # what queued meanwhile goes in the same transaction
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            done: list[tuple[Future[Any], Any]] = []
            conn.execute("BEGIN")
            for item in batch:
                if item is None:
                    stop = True
                    break
                job, future = item
                conn.execute("SAVEPOINT job")  # one bad job never undoes the others
                try:
                    result = job(conn)
                except BaseException as exc:
                    with contextlib.suppress(sqlite3.Error):
                        conn.execute("ROLLBACK TO job")
                        conn.execute("RELEASE job")
                    if future.set_running_or_notify_cancel():
                        future.set_exception(exc)
                    if not isinstance(exc, StoreError | sqlite3.OperationalError):
                        log.warning("a chat store write failed: %s", exc)
                    continue
                conn.execute("RELEASE job")
                done.append((future, result))
            with contextlib.suppress(sqlite3.Error):  # a failed job may have ended it
                conn.execute("COMMIT")
            for future, result in done:
                if future.set_running_or_notify_cancel():
                    future.set_result(result)
        conn.close()

    def _drain_failed(self, exc: StoreError) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            _job, future = item
            if future.set_running_or_notify_cancel():
                future.set_exception(exc)

    def _connect(self) -> sqlite3.Connection:
        try:
            self._path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self._path, check_same_thread=False, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA foreign_keys=ON")
            conn.execute("PRAGMA busy_timeout=5000")
            schema.migrate(conn, self._path)  # autocommit: the writer brackets its batches
            _purge(conn, "deleted IS NOT NULL AND deleted < ?", (time.time() - KEEP_DELETED,))
            with contextlib.suppress(OSError):
                self._path.chmod(0o600)
            return conn
        except sqlite3.DatabaseError as exc:
            raise StoreError(
                f"{self._path}: cannot open the chat database ({exc}). Move the file away to "
                "start with an empty history (your other settings are not affected)."
            ) from None
        except OSError as exc:
            raise StoreError(f"{self._path}: cannot open the chat database ({exc}).") from None

    def _submit(self, job: Callable[[sqlite3.Connection], T]) -> Future[T]:
        future: Future[T] = Future()
        if self._closed:
            future.set_exception(StoreError(f"{self._path}: the chat store was closed"))
            return future
        self._start()
        if self._open_error is not None:
            future.set_exception(self._open_error)
            return future
        self._queue.put((job, future))
        return future

    async def _call(self, job: Callable[[sqlite3.Connection], T]) -> T:
        if self._writes:
            self._writes.hand_over()  # reads see every write made before them
        return await asyncio.wrap_future(self._submit(job))

    async def read(self, job: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``job`` on the writer thread after every write queued before it."""
        return await self._call(job)

    def write(self, job: Callable[[sqlite3.Connection], Any]) -> None:
        """Queue a write; it happens in order (after every save made before it), off the
        loop, within ``WRITE_DELAY``. Failures are logged. Deleting message rows is fine
        (a trigger updates the index); a job that inserts message rows or changes their
        text must keep the index itself (``portico.chat.fts_index``)."""
        self._writes.job(job)

    async def flush(self) -> None:
        """Wait until everything written so far is in the database."""
        await self._call(lambda conn: None)

    # --- writes the Chat makes ----------------------------------------------------------
    # Each marks its row; the row is made from the object when the batch goes out (see
    # portico.chat.pending_writes), so an object saved again before then is written once.
    def save_conversation(
        self, c: StoredConversation, *, refresh: Callable[[], None] | None = None
    ) -> None:
        """``refresh``: brings ``c`` up to date; called when the row is made (a Chat marks
        its row once per batch this way)."""
        self._writes.mark(("c", c.id, ""), _ConversationFill(c, refresh))

    def save_settings(self, conversation_id: str, settings: dict[str, Any]) -> None:
        """The chat's own model settings (``portico.chat.settings``), replacing its last."""
        blob = _json_text(settings)

        def job(conn: sqlite3.Connection) -> None:
            conn.execute(
                "INSERT INTO chat_settings (conversation_id, settings) VALUES (?, ?) "
                "ON CONFLICT(conversation_id) DO UPDATE SET settings=excluded.settings",
                (conversation_id, blob),
            )

        self.write(job)

    def save_context(self, conversation_id: str, context: dict[str, Any]) -> None:
        """What the chat's requests leave out (its messages all stay in the store)."""
        blob = _json_text(context)

        def job(conn: sqlite3.Connection) -> None:
            conn.execute(
                "INSERT INTO chat_settings (conversation_id, context) VALUES (?, ?) "
                "ON CONFLICT(conversation_id) DO UPDATE SET context=excluded.context",
                (conversation_id, blob),
            )

        self.write(job)

    def save_message(self, conversation_id: str, message: Message) -> None:
        """The message with its tool calls (insert or update)."""
        key = ("m", message.id, "")
        marked = self._writes.get(key)
        if (
            isinstance(marked, _MessageFill)
            and marked.message is message
            and marked.conversation_id == conversation_id
        ):
            return  # saved since the last batch: that row is made from ``message`` too
        self._writes.drop(("x", message.id, ""))  # the message row carries the newest text
        self._writes.mark(key, _MessageFill(conversation_id, message))

    def save_text(self, message_id: str, text: str, status: str) -> None:
        """The streamed text so far (cheap: one row, no tool calls); written on the next
        pass of the loop, not after WRITE_DELAY (it bounds what a crash loses)."""
        if self._writes.has(("m", message_id, "")):
            self._writes.hurry()  # the pending message row carries the newest text
            return
        row = (text, status, message_id)
        self._writes.mark(("x", message_id, ""), lambda rows: rows[_TEXTS].append(row), urgent=True)

    def save_tool_call(self, conversation_id: str, message_id: str, seq: int, c: ToolCall) -> None:
        if self._writes.has(("m", message_id, "")):
            return  # the pending message row writes its calls too
        self._writes.mark(
            ("t", message_id, c.id),
            lambda rows: rows[_CALLS].append(_call_row(conversation_id, message_id, seq, c)),
        )

    def save_many(self, conversation_id: str, messages: list[Message]) -> None:
        for m in messages:
            self.save_message(conversation_id, m)

    # --- reads ------------------------------------------------------------------------
    async def load(self, conversation_id: str) -> StoredConversation:
        """Raises StoreError when there is no such conversation."""
        return await self._call(lambda conn: self._load(conn, conversation_id))

    def _load(self, conn: sqlite3.Connection, conversation_id: str) -> StoredConversation:
        row = conn.execute(
            "SELECT id, title, created, updated, model, parent_id, leaf_id, yolo, active_tools, "
            "spend, input_tokens, output_tokens, deleted FROM conversations WHERE id=?",
            (conversation_id,),
        ).fetchone()
        if row is None:
            raise StoreError(f"no conversation {conversation_id} (see `portico chat --list`)")
        if row[12] is not None:
            raise StoreError(
                f"the conversation {conversation_id} was deleted; bring it back with "
                f"`portico chat --restore {conversation_id[:8]}`"
            )
        spend = json.loads(row[9] or "{}")
        stored = StoredConversation(
            id=row[0],
            title=row[1] or "",
            created=row[2],
            updated=row[3],
            model=row[4],
            parent_id=row[5],
            leaf_id=row[6],
            yolo=bool(row[7]),
            active_tools=list(json.loads(row[8] or "[]")),
            spend={str(k): float(v) for k, v in (spend.get("totals") or {}).items()},
            past_limit=list(spend.get("past_limit") or []),
            model_spend={str(k): float(v) for k, v in (spend.get("models") or {}).items()},
            input_tokens=row[10] or 0,
            output_tokens=row[11] or 0,
        )
        settings = conn.execute(
            "SELECT settings, context FROM chat_settings WHERE conversation_id=?",
            (conversation_id,),
        ).fetchone()
        if settings is not None:
            try:
                stored.settings = dict(json.loads(settings[0] or "{}"))
                stored.context = dict(json.loads(settings[1] or "{}"))
            except (ValueError, TypeError):
                log.warning("the settings of chat %s do not read; it uses none", conversation_id)
        calls: dict[str, list[ToolCall]] = {}
        for c in conn.execute(
            "SELECT message_id, id, name, arguments, raw_arguments, outcome, result_text, "
            "result_images, is_error, duration, view_uri FROM tool_calls "
            "WHERE conversation_id=? "
            "ORDER BY message_id, seq",
            (conversation_id,),
        ):
            calls.setdefault(c[0], []).append(
                ToolCall(
                    id=c[1],
                    name=c[2],
                    arguments=json.loads(c[3] or "{}"),
                    raw_arguments=c[4] or "",
                    outcome=c[5],
                    result_text=c[6] or "",
                    result_images=tuple(Path(p) for p in json.loads(c[7] or "[]")),
                    is_error=bool(c[8]),
                    duration=c[9] or 0.0,
                    view_uri=c[10],
                )
            )
        for m in conn.execute(
            "SELECT id, role, text, parent_id, created, status, model, error, input_tokens, "
            "output_tokens, attachments, rounds FROM messages WHERE conversation_id=? "
            "ORDER BY rowid",
            (conversation_id,),
        ):
            stored.messages.append(
                Message(
                    id=m[0],
                    role=m[1],
                    text=m[2] or "",
                    parent_id=m[3],
                    created=m[4],
                    status=m[5],
                    model=m[6],
                    error=m[7],
                    input_tokens=m[8] or 0,
                    output_tokens=m[9] or 0,
                    attachments=_attachments(m[10]),
                    rounds=_rounds(m[11]),
                    tool_calls=calls.get(m[0], []),
                )
            )
        return stored

    async def search(self, query: str, limit: int = 50) -> list[SearchHit]:
        """FTS5 over message text and titles; words are ANDed, the last one is a prefix.
        The best matches among the newest ``SEARCH_WINDOW`` matching messages come first."""
        match = _fts_query(query)
        if not match:
            return []
        words = [w.lower() for w in query.replace('"', " ").split()]

        def job(conn: sqlite3.Connection) -> list[SearchHit]:
            # bm25 over every match costs ~4 µs a message (40 ms when a word is in 10,000):
            # rank the newest SEARCH_WINDOW matches only, then snippet just the shown ones.
            ranked = [
                r[0]
                for r in conn.execute(
                    "SELECT rowid FROM (SELECT rowid, rank FROM messages_fts WHERE "
                    "messages_fts MATCH ? ORDER BY rowid DESC LIMIT ?) ORDER BY rank LIMIT ?",
                    (match, SEARCH_WINDOW, limit),
                )
            ]
            hits: list[SearchHit] = []
            if ranked:
                marks = ",".join("?" * len(ranked))
                rows = {
                    r[0]: r[1:]
                    for r in conn.execute(
                        "SELECT m.rowid, m.conversation_id, c.title, m.id, m.text, c.updated "
                        "FROM messages m JOIN conversations c ON c.id = m.conversation_id "
                        f"WHERE m.rowid IN ({marks}) AND c.deleted IS NULL",
                        ranked,
                    )
                }
                for rowid in ranked:
                    if rowid in rows:
                        r = rows[rowid]
                        hits.append(SearchHit(r[0], r[1] or "", r[2], _snippet(r[3], words), r[4]))
            seen = {h.conversation_id for h in hits}
            for r in conn.execute(
                "SELECT id, title, updated FROM conversations WHERE title != '' "
                "AND deleted IS NULL ORDER BY updated DESC LIMIT 500"
            ):
                title = (r[1] or "").lower()
                if r[0] not in seen and words and all(w in title for w in words):
                    hits.append(SearchHit(r[0], r[1], "", r[1], r[2]))
            return hits[:limit]

        try:
            return await self._call(job)
        except sqlite3.OperationalError as exc:
            raise StoreError(f"cannot search for {query!r}: {exc}") from None

    async def _update(self, conversation_id: str, sql: str, args: tuple[Any, ...]) -> None:
        """``UPDATE conversations SET {sql} WHERE id=? AND deleted IS NULL``."""

        def job(conn: sqlite3.Connection) -> None:
            cur = conn.execute(
                f"UPDATE conversations SET {sql} WHERE id=? AND deleted IS NULL",
                (*args, conversation_id),
            )
            if cur.rowcount == 0:
                raise StoreError(f"no conversation {conversation_id} (see `portico chat --list`)")

        await self._call(job)

    async def rename(self, conversation_id: str, title: str) -> None:
        title = title.strip()
        if not title:
            raise StoreError("a chat's title cannot be empty")
        await self._update(conversation_id, "title=?, updated=?", (title, time.time()))

    async def set_pinned(self, conversation_id: str, pinned: bool) -> None:
        """Pinned chats come first in the list (their order by last change)."""
        await self._update(conversation_id, "pinned=?", (int(pinned),))

    async def set_archived(self, conversation_id: str, archived: bool) -> None:
        """Archived chats leave the list (``list(archived=True)`` shows them); search
        still finds them."""
        await self._update(conversation_id, "archived=?", (int(archived),))

    async def delete(self, conversation_id: str) -> None:
        """Delete it: it leaves the list and the search at once, and :meth:`restore`
        brings it back until :meth:`purge` (or a store opened ``KEEP_DELETED`` later)
        removes it with its messages and tool calls (branches of it stay, unlinked)."""
        await self._update(conversation_id, "deleted=?", (time.time(),))

    async def restore(self, conversation_id: str) -> None:
        """Undo a delete (StoreError when it is not deleted, or already gone)."""

        def job(conn: sqlite3.Connection) -> None:
            cur = conn.execute(
                "UPDATE conversations SET deleted=NULL WHERE id=? AND deleted IS NOT NULL",
                (conversation_id,),
            )
            if cur.rowcount == 0:
                raise StoreError(f"no deleted conversation {conversation_id} to restore")

        await self._call(job)

    async def purge(self, conversation_id: str) -> bool:
        """Remove a deleted conversation for good now (False: it is not deleted)."""
        return bool(
            await self._call(
                lambda conn: _purge(conn, "id=? AND deleted IS NOT NULL", (conversation_id,))
            )
        )

    async def export(self, conversation_id: str, format: ExportFormat = "md") -> str:
        """The shown branch as Markdown (for people) or JSON (every message, tool call and
        result, the whole tree)."""
        from portico.chat import export

        stored = await self.load(conversation_id)
        if format == "json":
            return export.to_json(stored)
        return export.to_markdown(stored)

    async def resolve_id(self, prefix: str, *, deleted: bool = False) -> str:
        """A full id from a unique prefix; StoreError naming the candidates otherwise.
        ``deleted``: among the deleted conversations (to restore one)."""
        cleaned = prefix.strip()
        if not cleaned:
            raise StoreError("name a conversation id (see `portico chat --list`)")

        def job(conn: sqlite3.Connection) -> list[str]:
            escaped = cleaned.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            return [
                r[0]
                for r in conn.execute(
                    "SELECT id FROM conversations WHERE id LIKE ? ESCAPE '\\' AND deleted "
                    f"IS {'NOT ' if deleted else ''}NULL LIMIT 6",
                    (escaped + "%",),
                )
            ]

        found = await self._call(job)
        if cleaned in found:
            return cleaned
        if len(found) == 1:
            return found[0]
        if not found:
            what = "deleted conversation" if deleted else "conversation"
            raise StoreError(f"no {what} {cleaned} (see `portico chat --list`)")
        raise StoreError(f"{cleaned} matches several conversations: {', '.join(found[:5])}")

    async def import_json_once(self, folder: Path | None = None) -> int:
        """Import the JSON conversations of earlier versions (once); returns how many."""
        from portico.chat import legacy

        source = folder if folder is not None else paths().state_dir / "conversations"
        return await self._call(lambda conn: legacy.import_folder(conn, source))

    async def close(self) -> None:
        """Write what is pending and close the database."""
        if self._writes:
            self._writes.hand_over()
        self._closed = True
        with self._lock:
            thread = self._thread
            self._thread = None
        if thread is None:
            return
        self._queue.put(None)
        await asyncio.to_thread(thread.join, 10)

    def close_sync(self) -> None:
        if self._writes:
            self._writes.hand_over()
        self._closed = True
        with self._lock:
            thread = self._thread
            self._thread = None
        if thread is not None:
            self._queue.put(None)
            thread.join(10)

    # last in the class: after it, "list" in annotations would mean this method
    async def list(
        self, limit: int | None = None, *, archived: bool = False, pinned_first: bool = True
    ) -> list[ConversationSummary]:
        """Pinned first (unless not ``pinned_first``), then newest first (by last
        change); deleted ones never. ``archived``: the archived chats instead of the
        others."""
        order = "c.pinned DESC, c.updated DESC" if pinned_first else "c.updated DESC"

        def job(conn: sqlite3.Connection) -> list[ConversationSummary]:
            rows = conn.execute(
                "SELECT c.id, c.title, c.updated, c.created, c.model, c.parent_id, "
                "(SELECT count(*) FROM messages m WHERE m.conversation_id = c.id), "
                "c.pinned, c.archived FROM conversations c WHERE c.deleted IS NULL AND "
                f"c.archived = ? ORDER BY {order} LIMIT ?",
                (int(archived), limit if limit is not None else -1),
            ).fetchall()
            return [
                ConversationSummary(
                    r[0], r[1] or "", r[2], r[3], r[4], r[6], r[5], bool(r[7]), bool(r[8])
                )
                for r in rows
            ]

        return await self._call(job)
