"""The Resources tab: resources and resource templates; Read shows text or an image.
A template's address is filled into the address field to complete before reading."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from portico.ui.pages.common import PageBackend, status_label
from portico.ui.pages.result_view import ResultView
from portico.ui.runtime_thread.snapshots import ResourceInfo

COLUMNS = ("Name", "Address", "Type")


class ResourcesPage(QWidget):
    def __init__(self, backend: PageBackend, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.backend = backend
        self.server: str | None = None
        self.resources: list[ResourceInfo] = []
        self.setAccessibleName("resources")
        self.status = status_label("resources status")
        self.status.setText("Resources appear here once the server is running.")
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.setAccessibleName("resource list")
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.table.currentCellChanged.connect(lambda *_: self._selected_changed())
        self.table.cellActivated.connect(lambda *_: self.read_current())
        self.address = QLineEdit()
        self.address.setAccessibleName("resource address")
        self.address.setPlaceholderText("resource address, e.g. file:///notes.txt")
        self.address.returnPressed.connect(self.read_current)
        self.read_button = QPushButton("&Read")
        self.read_button.setAccessibleName("Read resource")
        self.read_button.clicked.connect(self.read_current)
        self.result_view = ResultView("resource content")

        top = QWidget()
        top_col = QVBoxLayout(top)
        top_col.setContentsMargins(0, 0, 0, 0)
        top_col.addWidget(self.status)
        top_col.addWidget(self.table, 1)
        bottom = QWidget()
        bottom_col = QVBoxLayout(bottom)
        bottom_col.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        row.addWidget(QLabel("Address:"))
        row.addWidget(self.address, 1)
        row.addWidget(self.read_button)
        bottom_col.addLayout(row)
        bottom_col.addWidget(self.result_view, 1)
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(top)
        splitter.addWidget(bottom)
        splitter.setSizes([220, 320])
        column = QVBoxLayout(self)
        column.setContentsMargins(4, 4, 4, 4)
        column.addWidget(splitter)

    def set_loading(self, server: str | None) -> None:
        self.server = server
        self.resources = []
        self.table.setRowCount(0)
        self.result_view.clear()
        self.address.clear()
        self.status.setText("Loading resources…" if server else "No server selected.")

    def set_error(self, text: str) -> None:
        self.status.setText(text)

    def set_resources(self, server: str, resources: list[ResourceInfo]) -> None:
        self.server = server
        self.resources = list(resources)
        self.table.setRowCount(len(resources))
        for row, res in enumerate(resources):
            kind = "template" if res.template else (res.mime_type or "")
            for col, text in enumerate((res.name, res.uri, kind)):
                item = QTableWidgetItem(text)
                if res.description:
                    item.setToolTip(res.description)
                self.table.setItem(row, col, item)
        plain = sum(1 for r in resources if not r.template)
        templates = len(resources) - plain
        self.status.setText(
            f"{plain} resource(s), {templates} template(s)"
            if resources
            else "This server offers no resources."
        )
        if resources:
            self.table.setCurrentCell(0, 0)

    def select_uri(self, uri: str) -> None:
        for row, res in enumerate(self.resources):
            if res.uri == uri:
                self.table.setCurrentCell(row, 0)
                return
        raise KeyError(f"no resource {uri!r} on this page")

    def _selected_changed(self) -> None:
        row = self.table.currentRow()
        if 0 <= row < len(self.resources):
            res = self.resources[row]
            self.address.setText(res.uri)
            if res.template:
                self.address.setFocus()
                self.result_view.show_message(
                    "This is a template: fill in the parts in {braces}, then Read."
                )

    def read_current(self) -> None:
        uri = self.address.text().strip()
        if not uri or self.server is None:
            return
        if "{" in uri and "}" in uri:
            self.result_view.show_message(
                "Fill in the parts in {braces} of the template first.", error=True
            )
            return
        self.read_button.setEnabled(False)
        self.result_view.show_message(f"Reading {uri}…")
        self.backend.spawn(self._read(self.server, uri))

    async def _read(self, server: str, uri: str) -> None:
        try:
            result = await self.backend.run("read_resource", server, uri)
        except Exception as exc:
            if self.server == server:
                self.result_view.show_message(f"{type(exc).__name__}: {exc}", error=True)
            return
        finally:
            self.read_button.setEnabled(True)
        if self.server == server:
            self.result_view.show_result(result)
