"""The editor's server list: every config file, and under each its servers with badges."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QFont
from PySide6.QtWidgets import QAbstractItemView, QTreeWidget, QTreeWidgetItem, QWidget

from portico.config.editing import EditedFile

PATH_ROLE = Qt.ItemDataRole.UserRole
SERVER_ROLE = Qt.ItemDataRole.UserRole + 1
ROW_ROLE = Qt.ItemDataRole.UserRole + 2  # the _Row an item shows


class ServerList(QTreeWidget):
    serverSelected = Signal(str, str)  # file path, server ("" when a file row is selected)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setColumnCount(2)
        self.setHeaderLabels(["Server", "Source"])
        self.setAccessibleName("config servers")
        self.setRootIsDecorated(False)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setColumnWidth(0, 150)
        self.currentItemChanged.connect(self._current_changed)
        self._filling = False

    def populate(self, files: Sequence[EditedFile]) -> None:
        """Show ``files``: the rows that changed are replaced, the others stay (a raw edit
        of one server of hundreds touches one row; the selection and the scroll stay,
        the selection also when its row was replaced by one of the same server)."""
        keep = self.selected()
        in_project = {n for f in files if f.scope.value == "project" for n in f.server_names()}
        self._filling = True
        try:
            if [str(f.path) for f in files] != self._paths():
                self.clear()
                for file in files:
                    self._add_header(file)
            for i, file in enumerate(files):
                header = self.topLevelItem(i)
                assert header is not None
                header.setText(0, file.label)
                self._sync_rows(header, _rows(file, in_project))
        finally:
            self._filling = False
        if keep is not None and self.selected() == keep:
            return
        if keep is not None and self.select(*keep):
            return
        self.setCurrentItem(None)  # type: ignore[call-overload]  # clears it; the stubs lack None
        self.serverSelected.emit("", "")

    def _paths(self) -> list[str]:
        tops = (self.topLevelItem(i) for i in range(self.topLevelItemCount()))
        return [str(top.data(0, PATH_ROLE)) for top in tops if top is not None]

    def _add_header(self, file: EditedFile) -> None:
        header = QTreeWidgetItem([file.label, ""])
        header.setData(0, PATH_ROLE, str(file.path))
        header.setData(0, SERVER_ROLE, "")
        font = QFont(header.font(0))
        font.setBold(True)
        header.setFont(0, font)
        header.setToolTip(0, str(file.path))
        self.addTopLevelItem(header)
        header.setFirstColumnSpanned(True)
        header.setExpanded(True)

    def _sync_rows(self, header: QTreeWidgetItem, rows: list[_Row]) -> None:
        """Make ``header``'s children show ``rows``: the unchanged ones at either end
        stay, the stretch between is replaced."""
        path = str(header.data(0, PATH_ROLE))
        shown = [_shown(header.child(j)) for j in range(header.childCount())]
        start = 0
        while start < min(len(shown), len(rows)) and shown[start] == rows[start]:
            start += 1
        end = 0
        while end < min(len(shown), len(rows)) - start and shown[-1 - end] == rows[-1 - end]:
            end += 1
        for _ in range(len(shown) - start - end):
            header.takeChild(start)
        header.insertChildren(start, [_item(path, row) for row in rows[start : len(rows) - end]])

    def _items(self) -> list[QTreeWidgetItem]:
        items: list[QTreeWidgetItem] = []
        for i in range(self.topLevelItemCount()):
            top = self.topLevelItem(i)
            assert top is not None
            children = (top.child(j) for j in range(top.childCount()))
            items.extend(child for child in children if child is not None)
        return items

    def select(self, path: str, server: str) -> bool:
        for item in self._items():
            if item.data(0, PATH_ROLE) == path and item.data(0, SERVER_ROLE) == server:
                self.setCurrentItem(item)
                return True
        return False

    def select_name(self, server: str) -> bool:
        """Select ``server`` wherever it is defined (the last file wins: project over global)."""
        found = [i for i in self._items() if i.data(0, SERVER_ROLE) == server]
        if found:
            self.setCurrentItem(found[-1])
        return bool(found)

    def selected(self) -> tuple[str, str] | None:
        item = self.currentItem()
        if item is None or not item.data(0, SERVER_ROLE):
            return None
        return str(item.data(0, PATH_ROLE)), str(item.data(0, SERVER_ROLE))

    def rows(self) -> list[tuple[str, str]]:
        """(server, badge) of every server row, in order (for tests and screen readers)."""
        return [(i.text(0), i.text(1)) for i in self._items() if i.data(0, SERVER_ROLE)]

    def _current_changed(self) -> None:
        if self._filling:
            return
        chosen = self.selected()
        if chosen is None:
            item = self.currentItem()
            path = (
                str(item.data(0, PATH_ROLE)) if item is not None and item.data(0, PATH_ROLE) else ""
            )
            self.serverSelected.emit(path, "")
        else:
            self.serverSelected.emit(*chosen)


@dataclass(frozen=True)
class _Row:
    """One row as shown: a server (``name``) or the does-not-parse line (``name`` "")."""

    name: str
    badge: str = ""
    replaced: bool = False
    tip: str = ""


BROKEN = _Row("")


def _rows(file: EditedFile, in_project: set[str]) -> list[_Row]:
    rows = [BROKEN] if file.doc is None else []
    for name in file.server_names():
        replaced = file.scope.value == "global" and name in in_project
        tip = f"{file.scope.value} scope, {file.path}"
        if replaced:
            tip += "\nThe project defines a server of the same name, which is used."
        rows.append(_Row(name, file.badge + (" · replaced" if replaced else ""), replaced, tip))
    return rows


def _shown(item: QTreeWidgetItem | None) -> _Row | None:
    return item.data(0, ROW_ROLE) if item is not None else None


def _item(path: str, row: _Row) -> QTreeWidgetItem:
    if row == BROKEN:
        broken = QTreeWidgetItem(["(does not parse: see its raw tab)", ""])
        broken.setForeground(0, QBrush(Qt.GlobalColor.red))
        broken.setFlags(Qt.ItemFlag.ItemIsEnabled)
        broken.setData(0, ROW_ROLE, row)
        return broken
    item = QTreeWidgetItem([row.name, row.badge])
    item.setData(0, PATH_ROLE, path)
    item.setData(0, SERVER_ROLE, row.name)
    item.setData(0, ROW_ROLE, row)
    if row.replaced:
        item.setForeground(0, QBrush(Qt.GlobalColor.gray))
    item.setToolTip(0, row.tip)
    item.setToolTip(1, row.tip)
    return item
