"""The Clients view of the Servers place: the other MCP clients the local endpoint knows
(``portico clients add``), when each was last used, what it last asked, what its profile
lets it see, and Revoke (after a confirmation).

The data comes from the runtime side (``PageService.clients``: the list file and the
endpoint's own log, read there); Revoke removes the client's token there too, so its
next request gets 401.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QHBoxLayout,
    QMessageBox,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from portico.ui.pages.common import PageBackend
from portico.ui.text import plain, plain_label, set_plain

if TYPE_CHECKING:
    from portico.ui.runtime_thread.clients_service import ClientRow, ClientsSnapshot

COLUMNS = ("Client", "Last used", "Last asked", "Sees")


def when(stamp: float | None) -> str:
    if stamp is None:
        return "not since the app started"
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(stamp))


def endpoint_line(url: str | None) -> str:
    if url is None:
        return (
            "The local endpoint is off: turn on the endpoint.enabled setting to let other "
            "MCP clients use your servers."
        )
    return f"The local endpoint is on at {url}"


class ClientsPage(QWidget):
    def __init__(self, backend: PageBackend, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("clients")
        self.backend = backend
        self.rows: tuple[ClientRow, ...] = ()
        self.confirmation: QMessageBox | None = None  # the open Revoke question
        self.endpoint_label = plain_label("")
        self.endpoint_label.setAccessibleName("endpoint")
        self.table = QTreeWidget()
        self.table.setAccessibleName("client list")
        self.table.setRootIsDecorated(False)
        self.table.setHeaderLabels(list(COLUMNS))
        self.table.itemSelectionChanged.connect(self._selection_changed)
        self.empty_label = plain_label(
            "No clients yet. Add one in a terminal with `portico clients add NAME`."
        )
        self.refresh_button = QPushButton("&Refresh")
        self.refresh_button.setAccessibleName("Refresh clients")
        self.refresh_button.setToolTip("Read the clients and their last use again")
        self.refresh_button.clicked.connect(self.refresh)
        self.revoke_button = QPushButton("Re&voke")
        self.revoke_button.setAccessibleName("Revoke")
        self.revoke_button.setToolTip("Remove this client's token: its next request is refused")
        self.revoke_button.setEnabled(False)
        self.revoke_button.clicked.connect(self._revoke)
        buttons = QHBoxLayout()
        buttons.addWidget(self.refresh_button)
        buttons.addWidget(self.revoke_button)
        buttons.addStretch(1)
        column = QVBoxLayout(self)
        column.addWidget(self.endpoint_label)
        column.addWidget(self.table, 1)
        column.addWidget(self.empty_label)
        column.addLayout(buttons)

    def refresh(self) -> None:
        if not self.backend.available:
            return
        self.backend.op(lambda pages: pages.clients(), "List the endpoint's clients").success(
            self.show_snapshot
        ).run()

    def show_snapshot(self, snapshot: ClientsSnapshot) -> None:
        set_plain(self.endpoint_label, endpoint_line(snapshot.endpoint_url))
        self.rows = snapshot.clients
        selected = self.selected()
        self.table.clear()
        for row in snapshot.clients:
            item = QTreeWidgetItem(
                [
                    plain(row.name),
                    when(row.last_used),
                    plain(row.last_asked or "nothing yet"),
                    plain(row.sees),
                ]
            )
            self.table.addTopLevelItem(item)
            if row.name == selected:
                item.setSelected(True)
        for index in range(len(COLUMNS)):
            self.table.resizeColumnToContents(index)
        self.empty_label.setVisible(not snapshot.clients)
        self._selection_changed()

    def selected(self) -> str | None:
        items = self.table.selectedItems()
        if not items:
            return None
        index = self.table.indexOfTopLevelItem(items[0])
        return self.rows[index].name if 0 <= index < len(self.rows) else None

    def _selection_changed(self) -> None:
        self.revoke_button.setEnabled(self.selected() is not None)

    def _revoke(self) -> None:
        name = self.selected()
        if name is None:
            return
        box = QMessageBox(self)
        box.setIcon(QMessageBox.Icon.Question)
        box.setWindowTitle(f"Revoke {name}?")
        box.setText(f"Revoke the token of “{name}”?")
        box.setInformativeText(
            "Its next request is refused. To use your servers again it needs a new token "
            "(`portico connect` or `portico clients add`)."
        )
        revoke = box.addButton("Re&voke", QMessageBox.ButtonRole.DestructiveRole)
        keep = box.addButton("&Keep", QMessageBox.ButtonRole.RejectRole)
        box.setDefaultButton(keep)  # Enter never revokes
        box.setEscapeButton(keep)
        box.setAccessibleName(f"Revoke {name}?")
        box.setWindowModality(Qt.WindowModality.NonModal)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)

        def clicked(button: Any) -> None:
            if button is not revoke:
                return
            self.revoke_button.setEnabled(False)
            self.backend.op(lambda pages: pages.revoke_client(name), f"Revoke {name}").success(
                lambda _removed: self.refresh()
            ).run()

        box.buttonClicked.connect(clicked)
        box.destroyed.connect(lambda *_: setattr(self, "confirmation", None))
        self.confirmation = box
        box.open()  # never exec(): no nested loop
