"""Import another app's servers without the config editor: the servers found in its file,
ticked; what could not be carried over, in plain words; then their status until they run."""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from portico.config.importers import ImportResult
from portico.runtime.events import ServerState, Status
from portico.ui.dialogs.base import action_button
from portico.ui.onboarding.setup import FoundImport
from portico.ui.palette import set_tone
from portico.ui.tray_state import status_text


class ImportFlow(QDialog):
    submitted = Signal(list)  # [(name, fields)]
    chatRequested = Signal()

    def __init__(
        self, found: FoundImport, result: ImportResult, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.found = found
        self.import_result = result  # not `result`: that would shadow QDialog.result()
        self.setWindowTitle(f"Import from {found.label}")
        self.setAccessibleName(f"Import from {found.label}")
        self.setModal(False)
        self.setMinimumWidth(540)
        column = QVBoxLayout(self)
        noun = "server" if len(result.servers) == 1 else "servers"
        self.heading = QLabel(f"{len(result.servers)} {noun} in {found.path}")
        self.heading.setWordWrap(True)
        column.addWidget(self.heading)
        self.list = QListWidget()
        self.list.setAccessibleName("servers to import")
        for name, fields in result.servers:
            what = fields.get("url") or " ".join(
                [fields.get("command", ""), *fields.get("args", [])]
            )
            item = QListWidgetItem(f"{name}  —  {what}")
            item.setData(Qt.ItemDataRole.UserRole, name)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked)
            self.list.addItem(item)
        column.addWidget(self.list, 1)
        notes = [*result.problems, *(f"Skipped: {s}" for s in result.skipped), *result.notes]
        notes += [f"Store {s.name} with `{s.command()}` before it starts." for s in result.secrets]
        self.notes = QLabel("\n".join(notes))
        self.notes.setWordWrap(True)
        self.notes.setAccessibleName("import notes")
        set_tone(self.notes, "warning")
        column.addWidget(self.notes)
        self.notes.setVisible(bool(notes))  # in its parent first: alone, it is a window
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.status.setAccessibleName("status")
        column.addWidget(self.status)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(action_button("Close", self.close))
        self.chat_button = action_button("Start &chatting", self._start_chatting)
        self.chat_button.hide()
        row.addWidget(self.chat_button)
        self.import_button = QPushButton(f"&Import {len(result.servers)} {noun}")
        self.import_button.setAccessibleName("Import")
        self.import_button.setAutoDefault(False)
        self.import_button.clicked.connect(self.submit)
        row.addWidget(self.import_button)
        column.addLayout(row)
        self.list.itemChanged.connect(lambda _item: self._count())
        self.names: list[str] = []
        self.states: dict[str, ServerState] = {}

    def _start_chatting(self) -> None:
        self.chatRequested.emit()
        self.close()

    def _count(self) -> None:
        n = len(self.chosen())
        self.import_button.setText(f"&Import {n} server{'s' if n != 1 else ''}")
        self.import_button.setEnabled(n > 0)

    def chosen(self) -> list[tuple[str, dict[str, Any]]]:
        out = []
        for row in range(self.list.count()):
            item = self.list.item(row)
            if item.checkState() == Qt.CheckState.Checked:
                name = str(item.data(Qt.ItemDataRole.UserRole))
                out.append((name, json.loads(json.dumps(self.import_result.fields(name)))))
        return out

    def submit(self) -> None:
        servers = self.chosen()
        if not servers:
            return
        self.import_button.setEnabled(False)
        self.status.setText("Importing…")
        self.submitted.emit(servers)

    def imported(self, names: list[str]) -> None:
        self.names = names
        self.status.setText(f"Imported {', '.join(names)}. Starting…")
        self.chat_button.show()

    def failed(self, text: str) -> None:
        self.import_button.setEnabled(True)
        self.status.setText(text)
        set_tone(self.status, "error")

    def show_state(self, state: ServerState) -> None:
        if state.name not in self.names:
            return
        self.states[state.name] = state
        running = [s for s in self.states.values() if s.status is Status.RUNNING]
        lines = [f"{s.name}: {status_text(s)}" for s in self.states.values()]
        self.status.setText(f"{len(running)} of {len(self.names)} running.\n" + "\n".join(lines))
        set_tone(self.status, "ok" if len(running) == len(self.names) else "muted")
