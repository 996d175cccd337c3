"""Tasks started from Try it, kept on disk so they can be followed after a restart.

One small JSON file (``<state dir>/tasks.json``, 0600, atomic writes): per task the
server, the tool, the task id, when it was created and the last state seen. The chat keeps
its own tasks in the chat store (``chat/task_store.py``). A record stays until the person
dismisses it or it is older than ``KEEP_SECONDS``; an unreadable file is set aside with a
warning naming it, never silently lost.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Final

from portico.config.atomic import write_atomic
from portico.paths import paths
from portico.runtime.task_events import ENDED, TaskUpdate

log = logging.getLogger(__name__)

KEEP_SECONDS: Final = 7 * 24 * 3600.0
VERSION: Final = 1


@dataclass(frozen=True)
class TaskRecord:
    server: str
    tool: str
    task_id: str
    created: float  # time.time() when the handle arrived
    status: str
    message: str | None = None
    updated: float = 0.0
    result_text: str | None = None  # the result, once fetched (what Try it showed)
    is_error: bool = False

    @property
    def ended(self) -> bool:
        return self.status in ENDED


def _record(data: Any) -> TaskRecord | None:
    if not isinstance(data, dict):
        return None
    try:
        return TaskRecord(
            server=str(data["server"]),
            tool=str(data["tool"]),
            task_id=str(data["task_id"]),
            created=float(data["created"]),
            status=str(data["status"]),
            message=data.get("message"),
            updated=float(data.get("updated") or 0.0),
            result_text=data.get("result_text"),
            is_error=bool(data.get("is_error", False)),
        )
    except (KeyError, TypeError, ValueError):
        return None


class TaskStore:
    """The Try it task records (read on start, written on every state change)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path if path is not None else paths().state_dir / "tasks.json"
        self._records: dict[str, TaskRecord] = {}
        self._loaded = False
        self._dirty = False
        self._writer: asyncio.Task[None] | None = None

    async def load(self) -> None:
        """Read the file off the loop (once); records heard before are kept."""
        if self._loaded:
            return
        text = await asyncio.to_thread(self._read)
        if not self._loaded:
            self._parse(text)

    def _load(self) -> None:
        if not self._loaded:
            self._parse(self._read())

    def _read(self) -> str | None:
        try:
            return self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except OSError as exc:
            log.warning("%s: cannot read the saved tasks: %s", self.path, exc)
            return None

    def _parse(self, text: str | None) -> None:
        self._loaded = True
        if text is None:
            return
        try:
            items = json.loads(text).get("tasks", [])
        except (ValueError, AttributeError) as exc:
            aside = self.path.with_suffix(".json.bad")
            log.warning("%s: unreadable (%s); moved aside to %s", self.path, exc, aside.name)
            with contextlib.suppress(OSError):
                self.path.replace(aside)
            return
        cutoff = time.time() - KEEP_SECONDS
        for item in items if isinstance(items, list) else []:
            record = _record(item)
            if record is not None and record.created >= cutoff:
                self._records.setdefault(record.task_id, record)

    def _save(self) -> None:
        """Write soon, off the loop (one writer; a change during a write writes again)."""
        self._dirty = True
        if self._writer is not None and not self._writer.done():
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop (a script): write now
            self._dirty = False
            self._write(self._text())
            return
        self._writer = loop.create_task(self._drain())

    async def _drain(self) -> None:
        while self._dirty:
            self._dirty = False
            await asyncio.to_thread(self._write, self._text())

    async def flush(self) -> None:
        """Wait until what was recorded is on disk."""
        if self._writer is not None:
            await asyncio.shield(self._writer)

    def _text(self) -> str:
        data = {"version": VERSION, "tasks": [asdict(r) for r in self._records.values()]}
        return json.dumps(data, indent=1)

    def _write(self, text: str) -> None:
        try:
            write_atomic(self.path, text, mode=0o600)
        except OSError as exc:
            log.warning("%s: cannot save the tasks: %s", self.path, exc)

    def records(self, server: str | None = None) -> list[TaskRecord]:
        """Newest first; only ``server``'s when given."""
        self._load()
        found = [r for r in self._records.values() if server is None or r.server == server]
        return sorted(found, key=lambda r: r.created, reverse=True)

    def get(self, task_id: str) -> TaskRecord | None:
        self._load()
        return self._records.get(task_id)

    def heard(self, update: TaskUpdate) -> TaskRecord:
        """Record an update; writes only when the status or message changed."""
        self._load()
        old = self._records.get(update.task_id)
        if old is None:
            record = TaskRecord(
                update.server,
                update.tool,
                update.task_id,
                update.seen or time.time(),
                update.status,
                update.message,
                update.seen,
            )
        elif (old.status, old.message) == (update.status, update.message):
            return old
        else:
            record = replace(old, status=update.status, message=update.message, updated=update.seen)
        self._records[update.task_id] = record
        self._save()
        return record

    def finish(self, task_id: str, result_text: str, is_error: bool) -> None:
        self._load()
        old = self._records.get(task_id)
        if old is None:
            return
        status = old.status if old.ended else "completed"
        self._records[task_id] = replace(
            old, status=status, result_text=result_text, is_error=is_error, updated=time.time()
        )
        self._save()

    def forget(self, task_id: str) -> None:
        self._load()
        if self._records.pop(task_id, None) is not None:
            self._save()
