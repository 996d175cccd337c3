"""The Activity tab: every request and notification between Portico and the server, with
direction, method, time, duration, size and status; searchable; the selected entry
expands to its JSON with secrets masked; exportable as JSON Lines.

The runtime keeps the ring (runtime/activity.py); this page shows a copy that follows the
hub's ActivityChanged events (the controller fetches what changed since the last version).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from portico.runtime.activity import Exchange, masked
from portico.ui.models.page_items import Column, ItemsModel, current_row, items_view
from portico.ui.pages.common import PageBackend, status_label

SHOWN_LIMIT = 1000  # rows kept on the page (the runtime's ring holds the same)
ARROWS = {"out": "→", "in": "←"}


def _clock(stamp: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(stamp)) + f".{int(stamp % 1 * 1000):03d}"


def _duration(entry: Exchange) -> str:
    if entry.duration is None:
        return "…" if entry.kind == "request" else ""
    ms = entry.duration * 1000
    return f"{ms:.1f} ms" if ms < 100 else f"{ms:.0f} ms"


def _size(entry: Exchange) -> str:
    total = entry.total_size
    return f"{total} B" if total < 1024 else f"{total / 1024:.1f} KiB"


def _method(entry: Exchange) -> str:
    return entry.method or f"(reply to {entry.id})"


def _direction(entry: Exchange) -> str:
    who = "to the server" if entry.direction == "out" else "from the server"
    return f"{ARROWS[entry.direction]} {entry.kind}, {who}"


ACTIVITY_COLUMNS: tuple[Column[Exchange], ...] = (
    Column("Time", lambda e: _clock(e.time)),
    Column("Direction", _direction),
    Column("Method", _method, stretch=True),
    Column("Asked by", lambda e: e.caller),
    Column("Status", lambda e: e.status),
    Column("Duration", _duration),
    Column("Size", _size),
)


def matches(entry: Exchange, term: str) -> bool:
    term = term.lower()
    if term in _method(entry).lower() or term in entry.status.lower():
        return True
    return term in json.dumps(masked(entry), ensure_ascii=False).lower()


class ActivityPage(QWidget):
    exported = Signal(str, int)  # path, entries written

    def __init__(self, backend: PageBackend, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.backend = backend
        self.server: str | None = None
        self.version = 0
        self.entries: dict[int, Exchange] = {}
        self.export_dialog: QFileDialog | None = None
        self.setAccessibleName("activity")
        self.search = QLineEdit()
        self.search.setPlaceholderText("Search method, status or content")
        self.search.setAccessibleName("search the activity")
        self.search.setClearButtonEnabled(True)
        self._filter_timer = QTimer(self)
        self._filter_timer.setSingleShot(True)
        self._filter_timer.setInterval(150)
        self._filter_timer.timeout.connect(self._refilter)
        self.search.textChanged.connect(lambda _t: self._filter_timer.start())
        self.export_button = QPushButton("E&xport…")
        self.export_button.setAccessibleName("Export activity")
        self.export_button.setToolTip("Save this server's activity as JSON Lines (secrets masked)")
        self.export_button.clicked.connect(self.choose_export)
        self.count = status_label("activity count")
        top = QHBoxLayout()
        search_label = QLabel("Sear&ch:")
        search_label.setBuddy(self.search)
        top.addWidget(search_label)
        top.addWidget(self.search, 1)
        top.addWidget(self.count)
        top.addWidget(self.export_button)

        self.model: ItemsModel[Exchange] = ItemsModel(ACTIVITY_COLUMNS, self)
        self.table = items_view(self.model, "activity list")
        self.table.selectionModel().currentRowChanged.connect(lambda *_: self._show_selected())
        self.detail = QPlainTextEdit()
        self.detail.setReadOnly(True)
        self.detail.setAccessibleName("activity entry")
        self.detail.setPlaceholderText("Select an entry to see its JSON (secrets masked).")
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.table)
        splitter.addWidget(self.detail)
        splitter.setSizes([300, 200])
        column = QVBoxLayout(self)
        column.setContentsMargins(4, 4, 4, 4)
        column.addLayout(top)
        column.addWidget(splitter, 1)
        self._update_count()

    # --- content -------------------------------------------------------------------------

    def set_server(self, server: str | None) -> None:
        if server == self.server:
            return
        self.server = server
        self.version = 0
        self.entries = {}
        self.model.set_items([])
        self.detail.clear()
        self._update_count()

    def merge(self, server: str, version: int, changed: list[Exchange]) -> None:
        """Entries added or changed on the runtime side since our last version."""
        if server != self.server:
            return
        self.version = max(self.version, version)
        for entry in changed:
            self.entries[entry.seq] = entry
        if len(self.entries) > SHOWN_LIMIT:
            for seq in sorted(self.entries)[: len(self.entries) - SHOWN_LIMIT]:
                del self.entries[seq]
        self._refilter()

    def _refilter(self) -> None:
        keep = self.selected()
        term = self.search.text().strip()
        rows = [self.entries[s] for s in sorted(self.entries)]
        if term:
            rows = [e for e in rows if matches(e, term)]
        at_end = current_row(self.table) in (-1, self.model.rowCount() - 1)
        blocker = self.table.selectionModel().blockSignals(True)
        self.model.set_items(rows)
        self.table.selectionModel().blockSignals(blocker)
        if keep is not None:
            for row, entry in enumerate(rows):
                if entry.seq == keep.seq:
                    self.table.selectRow(row)
                    break
        if at_end:
            self.table.scrollToBottom()
        self._update_count()
        self._show_selected()

    def _update_count(self) -> None:
        shown, total = self.model.rowCount(), len(self.entries)
        self.count.setText(f"{shown} of {total}" if shown != total else f"{total} entries")

    def selected(self) -> Exchange | None:
        return self.model.item(current_row(self.table))

    def select_row(self, row: int) -> None:
        self.table.selectRow(row)
        self._show_selected()

    def _show_selected(self) -> None:
        entry = self.selected()
        if entry is None:
            self.detail.clear()
            return
        self.detail.setPlainText(json.dumps(masked(entry), indent=2, ensure_ascii=False))

    # --- export --------------------------------------------------------------------------

    def choose_export(self) -> None:
        if self.server is None:
            return
        dialog = QFileDialog(self, "Export activity")
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.setNameFilter("JSON Lines (*.jsonl)")
        dialog.setDefaultSuffix("jsonl")
        dialog.selectFile(f"{self.server}-activity.jsonl")
        server = self.server
        dialog.fileSelected.connect(lambda path: self.export_to(server, Path(path)))
        self.export_dialog = dialog
        dialog.open()  # never exec(): no nested loop

    def export_to(self, server: str, path: Path) -> None:
        (
            self.backend.op(
                lambda pages: pages.export_activity(server, path),
                f"Export the activity of {server}",
                server=server,
            )
            .success(lambda count: self._exported(path, count))
            .run()
        )

    def _exported(self, path: Path, count: int) -> None:
        self.count.setText(f"{count} entries written to {path}")
        self.exported.emit(str(path), count)
