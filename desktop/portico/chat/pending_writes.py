"""The chat store's writes that the event loop made and the writer thread has not got yet.

A turn changes the same few rows many times within milliseconds (a message row when it
starts, again when a tool call starts and ends, the conversation row after each step).
Writing each change as it comes costs the loop a serialisation per change and wakes the
writer thread while the turn is still running; under the GIL that thread competes with
the turn. So a change only *marks* its row (``key``) with a function that reads the
object's state when the batch is made: one batch per ``delay`` carries the last state of
every marked row, serialised once, and the writer runs it as one transaction.

``urgent`` marks (the streamed text's periodic flush) go out on the next pass of the loop,
as before. Reads hand everything pending over first, so they see every earlier write.
Without a running loop a mark is written at once. Loop thread only.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import Callable, Sequence
from typing import Any

log = logging.getLogger(__name__)

Job = Callable[[sqlite3.Connection], Any]
Rows = list[list[tuple[Any, ...]]]  # one list per statement, in the statements' order
Fill = Callable[[Rows], None]  # appends the row(s) of one marked object
Write = Callable[[sqlite3.Connection, Rows], None]  # writes one batch's rows
Key = tuple[str, str, str]


class PendingWrites:
    def __init__(
        self,
        statements: Sequence[str],
        submit: Callable[[Job], object],
        delay: float,
        *,
        write: Write | None = None,
    ) -> None:
        """``statements``: the upserts marks fill rows for, run in this order (a row may
        reference a row of an earlier statement). ``submit``: hands a job to the writer.
        ``write``: runs a batch on the writer (default :func:`write_rows`), for a caller
        that keeps derived data (an index) in step with the rows."""
        self._statements = tuple(statements)
        self._write: Write = write or (lambda conn, rows: write_rows(conn, self._statements, rows))
        self._submit = submit
        self.delay = delay
        self._marks: dict[Key, Fill] = {}
        self._jobs: list[Job] = []  # raw jobs and made batches, in order
        self._timer: asyncio.TimerHandle | asyncio.Handle | None = None
        self._timer_loop: asyncio.AbstractEventLoop | None = None
        self._urgent = False

    def __bool__(self) -> bool:
        return bool(self._marks or self._jobs)

    def has(self, key: Key) -> bool:
        return key in self._marks

    def get(self, key: Key) -> Fill | None:
        """The fill ``key`` is marked with (None: not marked)."""
        return self._marks.get(key)

    def drop(self, key: Key) -> None:
        self._marks.pop(key, None)

    def mark(self, key: Key, fill: Fill, *, urgent: bool = False) -> None:
        """Write the row(s) ``fill`` makes, soon (a later mark of ``key`` replaces it)."""
        marked = key in self._marks
        self._marks[key] = fill
        if not marked or urgent:  # an earlier mark already set the timer
            self._schedule(urgent)

    def hurry(self) -> None:
        """Hand what is pending over on the next pass of the loop."""
        if self:
            self._schedule(True)

    def job(self, job: Job, *, urgent: bool = False) -> None:
        """A write that is not a row upsert (a delete, a migration step): in order after
        every mark made before it."""
        if self._marks:
            self._jobs.append(self._batch())
        self._jobs.append(job)
        self._schedule(urgent)

    def hand_over(self) -> None:
        """Give the writer everything pending now (one job)."""
        self._cancel_timer()
        if self._marks:
            self._jobs.append(self._batch())
        jobs, self._jobs = self._jobs, []
        if not jobs:
            return
        if len(jobs) == 1:
            self._submit(jobs[0])
            return

        def run_all(conn: sqlite3.Connection) -> None:
            for job in jobs:
                _guarded(conn, "part", job)

        self._submit(run_all)

    # --- plumbing ---------------------------------------------------------------------
    def _schedule(self, urgent: bool) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.hand_over()
            return
        if self._timer is not None and self._timer_loop is not loop:
            self.hand_over()  # marked on a loop that is gone: write that part now
            if not self:
                return
        if self._timer is not None and (self._urgent or not urgent):
            return
        self._cancel_timer()
        self._urgent = urgent
        self._timer_loop = loop
        if urgent:
            self._timer = loop.call_soon(self._fire)
        else:
            self._timer = loop.call_later(self.delay, self._fire)

    def _fire(self) -> None:
        self._timer = None
        self.hand_over()

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = None
        self._timer_loop = None
        self._urgent = False

    def _batch(self) -> Job:
        rows: Rows = [[] for _ in self._statements]
        marks, self._marks = self._marks, {}
        for fill in marks.values():
            fill(rows)
        write = self._write
        return lambda conn: write(conn, rows)


def write_rows(conn: sqlite3.Connection, statements: Sequence[str], rows: Rows) -> None:
    """Each statement's rows, in the statements' order."""
    for sql, batch in zip(statements, rows, strict=True):
        if batch:
            _upsert(conn, sql, batch)


def _upsert(conn: sqlite3.Connection, sql: str, rows: list[tuple[Any, ...]]) -> None:
    """All rows at once; if that fails, row by row so one bad row loses only itself."""
    conn.execute("SAVEPOINT rows")
    try:
        conn.executemany(sql, rows)
    except sqlite3.Error:
        conn.execute("ROLLBACK TO rows")
        for row in rows:
            _guarded(conn, "row", lambda c, row=row: c.execute(sql, row))  # type: ignore[misc]
    finally:
        conn.execute("RELEASE rows")


def _guarded(conn: sqlite3.Connection, name: str, job: Job) -> None:
    conn.execute(f"SAVEPOINT {name}")
    try:
        job(conn)
    except Exception as exc:
        conn.execute(f"ROLLBACK TO {name}")
        log.warning("a chat store write failed: %s", exc)
    finally:
        conn.execute(f"RELEASE {name}")
