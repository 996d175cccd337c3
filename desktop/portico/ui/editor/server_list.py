"""The editor's server list: every config file, and under each its servers with badges."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QFont
from PySide6.QtWidgets import QAbstractItemView, QTreeWidget, QTreeWidgetItem, QWidget

from portico.config.editing import EditedFile

PATH_ROLE = Qt.ItemDataRole.UserRole
SERVER_ROLE = Qt.ItemDataRole.UserRole + 1


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
        """Rebuild from ``files``, keeping the selection when that server still exists."""
        keep = self.selected()
        in_project = {n for f in files if f.scope.value == "project" for n in f.server_names()}
        self._filling = True
        try:
            self.clear()
            for file in files:
                header = QTreeWidgetItem([file.label, ""])
                header.setData(0, PATH_ROLE, str(file.path))
                header.setData(0, SERVER_ROLE, "")
                font = QFont(header.font(0))
                font.setBold(True)
                header.setFont(0, font)
                header.setToolTip(0, str(file.path))
                self.addTopLevelItem(header)
                header.setFirstColumnSpanned(True)
                if file.doc is None:
                    broken = QTreeWidgetItem(["(does not parse: see its raw tab)", ""])
                    broken.setForeground(0, QBrush(Qt.GlobalColor.red))
                    broken.setFlags(Qt.ItemFlag.ItemIsEnabled)
                    header.addChild(broken)
                for name in file.server_names():
                    replaced = file.scope.value == "global" and name in in_project
                    badge = file.badge + (" · replaced" if replaced else "")
                    item = QTreeWidgetItem([name, badge])
                    item.setData(0, PATH_ROLE, str(file.path))
                    item.setData(0, SERVER_ROLE, name)
                    tip = f"{file.scope.value} scope, {file.path}"
                    if replaced:
                        tip += "\nThe project defines a server of the same name, which is used."
                        item.setForeground(0, QBrush(Qt.GlobalColor.gray))
                    item.setToolTip(0, tip)
                    item.setToolTip(1, tip)
                    header.addChild(item)
                header.setExpanded(True)
        finally:
            self._filling = False
        if keep is not None and self.select(*keep):
            return
        self.setCurrentItem(None)  # type: ignore[call-overload]  # clears it; the stubs lack None
        self.serverSelected.emit("", "")

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
