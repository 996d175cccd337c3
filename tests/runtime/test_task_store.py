"""Try it's task records on disk (runtime/task_store.py) and the polling interval rules."""

from __future__ import annotations

import json
import stat
import time
from collections.abc import Callable
from pathlib import Path

from portico.runtime import task_store
from portico.runtime.task_events import TaskUpdate
from portico.runtime.task_store import TaskStore
from portico.runtime.tasks import CreateTaskResult, poll_delay


def _update(status: str, message: str | None = None, task_id: str = "t-1") -> TaskUpdate:
    return TaskUpdate("srv", "slow", task_id, status, message, seen=time.time())


async def test_records_survive_a_new_store_and_are_written_only_on_change(tmp_path: Path) -> None:
    path = tmp_path / "state" / "tasks.json"
    store = TaskStore(path)
    first = store.heard(_update("working", "step 1"))
    await store.flush()
    written = path.read_text(encoding="utf-8")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert store.heard(_update("working", "step 1")) is first  # same state: no write
    await store.flush()
    assert path.read_text(encoding="utf-8") == written
    store.heard(_update("working", "step 2"))
    store.heard(_update("completed", "done"))
    store.finish("t-1", "computed", is_error=False)
    await store.flush()

    again = TaskStore(path)
    (record,) = again.records("srv")
    assert (record.tool, record.status, record.message) == ("slow", "completed", "done")
    assert (record.result_text, record.is_error, record.created) == (
        "computed",
        False,
        first.created,
    )
    assert record.ended
    assert again.records("other") == []
    again.forget("t-1")
    await again.flush()
    assert TaskStore(path).records() == []


async def test_newest_first_and_old_records_are_dropped(tmp_path: Path) -> None:
    path = tmp_path / "tasks.json"
    old = time.time() - task_store.KEEP_SECONDS - 10
    items = [
        {"server": "s", "tool": "a", "task_id": "old", "created": old, "status": "working"},
        {
            "server": "s",
            "tool": "b",
            "task_id": "mid",
            "created": time.time() - 60,
            "status": "working",
        },
        {"server": "s", "tool": "c", "task_id": "new", "created": time.time(), "status": "failed"},
        {"server": "s", "task_id": "broken"},  # missing keys: skipped
    ]
    path.write_text(json.dumps({"version": 1, "tasks": items}), encoding="utf-8")
    assert [r.task_id for r in TaskStore(path).records()] == ["new", "mid"]


def test_an_unreadable_file_is_set_aside_with_a_warning(
    tmp_path: Path, allow_logs: Callable[[str], None]
) -> None:
    allow_logs(r"tasks\.json: unreadable .*moved aside to tasks\.json\.bad")
    path = tmp_path / "tasks.json"
    path.write_text("{not json", encoding="utf-8")
    assert TaskStore(path).records() == []
    assert (tmp_path / "tasks.json.bad").read_text(encoding="utf-8") == "{not json"
    assert not path.exists()


def test_the_poll_interval_is_the_servers_within_bounds() -> None:
    def handle(ms: int | None) -> CreateTaskResult:
        return CreateTaskResult(task_id="t", status="working", poll_interval_ms=ms)

    assert poll_delay(handle(250)) == 0.25
    assert poll_delay(handle(None)) == 1.0  # none suggested
    assert poll_delay(handle(0)) == 0.01  # never spin
    assert poll_delay(handle(3_600_000)) == 30.0  # a person sees a change within 30 s


def test_an_update_reads_as_one_line() -> None:
    assert _update("working", "step 2 of 5").describe() == "task working… — step 2 of 5"
    assert _update("input_required").describe() == "task input required"
    assert _update("expired").terminal and not _update("working").terminal
