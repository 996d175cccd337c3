"""The Try it tasks of a server: calls the server answered with a task (tasks extension),
kept across restarts, each with its last status; Fetch result follows one to its result
(it may still be running), Dismiss forgets it."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QGroupBox,
    QHBoxLayout,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from portico.runtime.task_events import STATUS_WORDS
from portico.ui.pages.common import PageBackend, status_label
from portico.ui.text import plain, set_plain

if TYPE_CHECKING:
    from portico.runtime.results import ToolResult
    from portico.runtime.task_store import TaskRecord

ShowResult = Callable[[str, "ToolResult"], None]
ShowError = Callable[[str], None]


def record_text(record: TaskRecord) -> str:
    """ "slow_compute — working… (step 2 of 5) — started 14:03"."""
    word = STATUS_WORDS.get(record.status, record.status)
    detail = f" ({record.message})" if record.message else ""
    started = time.strftime("%H:%M", time.localtime(record.created))
    return f"{record.tool} — {word}{detail} — started {started}"


class TaskPanel(QGroupBox):
    def __init__(
        self,
        backend: PageBackend,
        show_result: ShowResult,
        show_error: ShowError,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__("Tasks", parent)
        self.setAccessibleName("tasks")
        self.backend = backend
        self.server: str | None = None
        self.records: list[TaskRecord] = []
        self._show_result = show_result
        self._show_error = show_error
        column = QVBoxLayout(self)
        self.list = QListWidget()
        self.list.setAccessibleName("task list")
        self.list.setMaximumHeight(110)
        self.list.currentRowChanged.connect(lambda _row: self._enable())
        self.list.itemActivated.connect(lambda _item: self.fetch_selected())
        column.addWidget(self.list)
        row = QHBoxLayout()
        self.fetch_button = QPushButton("&Fetch result")
        self.fetch_button.setAccessibleName("Fetch task result")
        self.fetch_button.setToolTip("Follow the task on the server until its result is ready")
        self.fetch_button.clicked.connect(self.fetch_selected)
        row.addWidget(self.fetch_button)
        self.dismiss_button = QPushButton("Dismiss")
        self.dismiss_button.setAccessibleName("Dismiss task")
        self.dismiss_button.clicked.connect(self.dismiss_selected)
        row.addWidget(self.dismiss_button)
        self.status = status_label("task status")
        row.addWidget(self.status, 1)
        column.addLayout(row)
        self._fetching: str | None = None
        self.hide()

    def show_server(self, server: str | None) -> None:
        if server != self.server:
            self.server = server
            self.status.clear()
        self.refresh()

    def refresh(self) -> None:
        server = self.server
        if server is None or not self.backend.available:
            self._fill([])
            return
        self.backend.op(lambda pages: pages.task_records(server), "Read tasks").success(
            lambda records: self._fill(records) if self.server == server else None
        ).run()

    def _fill(self, records: list[TaskRecord]) -> None:
        keep = self.selected()
        known = {r.task_id for r in self.records}
        if any(r.task_id not in known for r in records):
            keep = None  # a new task: select it (the newest is first)
        self.records = records
        self.list.clear()
        for record in records:
            item = QListWidgetItem(plain(record_text(record)))
            item.setData(Qt.ItemDataRole.UserRole, record.task_id)
            item.setToolTip(f"task id {record.task_id}")
            self.list.addItem(item)
        target = 0
        for index, record in enumerate(records):
            if keep is not None and record.task_id == keep.task_id:
                target = index
        if records:
            self.list.setCurrentRow(target)
        self.setVisible(bool(records))
        self._enable()

    def selected(self) -> TaskRecord | None:
        row = self.list.currentRow()
        return self.records[row] if 0 <= row < len(self.records) else None

    def _enable(self) -> None:
        record = self.selected()
        self.fetch_button.setEnabled(record is not None and self._fetching is None)
        self.dismiss_button.setEnabled(record is not None)

    def fetch_selected(self) -> None:
        record, server = self.selected(), self.server
        if record is None or server is None or self._fetching is not None:
            return
        self._fetching = record.task_id
        set_plain(self.status, f"Fetching the result of {record.tool}…")
        self._enable()

        def progress(done: float, total: float | None, message: str | None) -> None:
            if message:
                set_plain(self.status, message)

        def returned(result: ToolResult) -> None:
            set_plain(
                self.status, f"{record.tool} returned" + (" an error." if result.is_error else ".")
            )
            self._show_result(record.tool, result)

        def failed(exc: Exception) -> None:
            text = str(exc)
            if record.result_text is not None and "no longer has task" in text:
                text += f"\n\nThe result shown when it ended:\n{record.result_text}"
            set_plain(self.status, f"{record.tool}: the result could not be fetched.")
            self._show_error(text)

        def ended() -> None:
            self._fetching = None
            self.refresh()

        relay = _relay(progress)
        self.backend.op(
            lambda pages: pages.fetch_task(server, record.task_id, relay), f"Fetch {record.tool}"
        ).success(returned).failure(failed).finally_(ended).run()

    def dismiss_selected(self) -> None:
        record = self.selected()
        if record is None:
            return
        self.backend.op(lambda pages: pages.forget_task(record.task_id), "Dismiss task").finally_(
            self.refresh
        ).run()


def _relay(
    progress: Callable[[float, float | None, str | None], None],
) -> Callable[[float, float | None, str | None], None]:
    """Progress comes on the runtime thread: hop to the GUI loop."""
    import asyncio

    loop = asyncio.get_running_loop()

    def hop(done: float, total: float | None, message: str | None) -> None:
        loop.call_soon_threadsafe(progress, done, total, message)

    return hop
