"""The Resources tab: resources and resource templates; Read shows text or an image.
A template's address is filled into the address field to complete before reading."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from portico.runtime.results import ToolResult
from portico.ui.icons import announced_icon
from portico.ui.models.page_items import (
    Column,
    ItemsModel,
    current_row,
    items_view,
    set_current_row,
)
from portico.ui.pages.common import PageBackend, status_label
from portico.ui.pages.result_view import ResultView
from portico.ui.runtime_thread.snapshots import ResourceInfo


def _tip(res: ResourceInfo) -> str | None:
    return res.description or None


RESOURCE_COLUMNS: tuple[Column[ResourceInfo], ...] = (
    Column("Name", lambda r: r.name, _tip, decoration=lambda r: announced_icon(r.icon)),
    Column("Address", lambda r: r.uri, _tip, stretch=True),
    Column("Type", lambda r: "template" if r.template else (r.mime_type or ""), _tip),
)


class ResourcesPage(QWidget):
    def __init__(self, backend: PageBackend, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.backend = backend
        self.server: str | None = None
        self.shown: str | None = None  # the address whose content is on show (kept live)
        self.setAccessibleName("resources")
        self.status = status_label("resources status")
        self.status.setText("Resources appear here once the server is running.")
        self.model: ItemsModel[ResourceInfo] = ItemsModel(RESOURCE_COLUMNS, self)
        self.table = items_view(self.model, "resource list")
        self.table.selectionModel().currentRowChanged.connect(lambda *_: self._selected_changed())
        self.table.activated.connect(lambda *_: self.read_current())
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

    @property
    def resources(self) -> list[ResourceInfo]:
        return self.model.items

    def set_loading(self, server: str | None) -> None:
        self.server = server
        self._watch(None)
        self.model.set_items([])
        self.result_view.clear()
        self.address.clear()
        self.status.setText("Loading resources…" if server else "No server selected.")

    def set_error(self, text: str) -> None:
        self.status.setText(text)

    def set_resources(self, server: str, resources: list[ResourceInfo]) -> None:
        self.server = server
        self.model.set_items(resources)
        plain = sum(1 for r in resources if not r.template)
        templates = len(resources) - plain
        self.status.setText(
            f"{plain} resource(s), {templates} template(s)"
            if resources
            else "This server offers no resources."
        )
        if resources:
            set_current_row(self.table, 0)

    def select_uri(self, uri: str) -> None:
        for row, res in enumerate(self.resources):
            if res.uri == uri:
                set_current_row(self.table, row)
                return
        raise KeyError(f"no resource {uri!r} on this page")

    def _selected_changed(self) -> None:
        res = self.model.item(current_row(self.table))
        if res is not None:
            if res.uri != self.shown:
                self._watch(None)
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
        if uri != self.shown:
            self._watch(None)  # its content is about to be replaced
        self.read_button.setEnabled(False)
        self.result_view.show_message(f"Reading {uri}…")
        server = self.server
        (
            self.backend.op(lambda pages: pages.read_resource(server, uri), f"Read {uri}")
            .success(lambda result: self._show(server, result, uri))
            .failure(lambda exc: self._failed(server, exc))
            .finally_(lambda: self.read_button.setEnabled(True))
            .run()
        )

    def _failed(self, server: str, exc: Exception) -> None:
        if self.server == server:
            self.result_view.show_message(f"{type(exc).__name__}: {exc}", error=True)

    def _show(self, server: str, result: ToolResult, uri: str) -> None:
        if self.server == server:
            self.result_view.show_result(result)
            self._watch(uri)

    def _watch(self, uri: str | None) -> None:
        """Keep the resource on show live: subscribe to it (and drop the one before)."""
        if uri == self.shown:
            return
        self.shown = uri
        server = self.server if uri is not None else None
        if not self.backend.available:
            return
        (
            self.backend.op(
                lambda pages: pages.watch_resource(server, uri),
                f"Subscribe to {uri}" if uri else "Unsubscribe",
            )
            .failure(lambda exc: self._watch_failed(uri, exc))
            .run()
        )

    def _watch_failed(self, uri: str | None, exc: Exception) -> None:
        if uri is not None and uri == self.shown:
            self.status.setText(f"{uri} is not kept up to date: {exc}")

    def resource_updated(self, server: str, uri: str) -> None:
        """A subscribed resource changed on the server: read it again if still on show."""
        if server != self.server or uri != self.shown:
            return
        (
            self.backend.op(lambda pages: pages.read_resource(server, uri), f"Read {uri}")
            .success(lambda result: self._show(server, result, uri))
            .failure(lambda exc: self._failed(server, exc))
            .run()
        )
