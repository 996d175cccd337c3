"""Add server: blank (stdio or HTTP), from a preset, or imported from another client.

A non-modal dialog. ``chosen`` carries ``(target file path, [(name, neutral fields)])``;
the window adds them to that file's document (nothing is written until Save).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from portico.config.document import valid_server_name
from portico.config.presets import preset_fields
from portico.ui.dialogs.base import monospace_view
from portico.ui.ops import Ops
from portico.ui.palette import set_tone
from portico.ui.preset_list import preset_list

BLANK, PRESET, IMPORT = "Blank", "Preset", "Import"


class AddServerDialog(QDialog):
    chosen = Signal(str, list)  # target path, [(name, fields)]

    def __init__(
        self,
        targets: Sequence[tuple[Path, str]],  # (path, label) of every config file
        *,
        project: Path | None = None,
        taken: Sequence[str] = (),
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Add server")
        self.setModal(False)
        self.setWindowModality(Qt.WindowModality.NonModal)
        self.setAccessibleName("Add server")
        self.setMinimumWidth(560)
        self.project = project
        self.taken = set(taken)
        self.import_result: Any = None
        self._previews = 0  # counts previews: only the latest one's result is shown
        self.ops = Ops()
        self.finished.connect(lambda _result: self.ops.cancel_all())
        column = QVBoxLayout(self)

        target_row = QFormLayout()
        self.target = QComboBox()
        self.target.setAccessibleName("target file")
        for path, label in targets:
            self.target.addItem(label, str(path))
        target_row.addRow("Add to:", self.target)
        column.addLayout(target_row)

        self.tabs = QTabWidget()
        self.tabs.addTab(self._blank_tab(), BLANK)
        self.tabs.addTab(self._preset_tab(), PRESET)
        self.tabs.addTab(self._import_tab(), IMPORT)
        column.addWidget(self.tabs, 1)

        self.problem = QLabel()
        self.problem.setWordWrap(True)
        set_tone(self.problem, "error")
        self.problem.setAccessibleName("problem")
        self.problem.hide()
        column.addWidget(self.problem)
        self.buttons = QDialogButtonBox()
        self.add_button = self.buttons.addButton("Add", QDialogButtonBox.ButtonRole.AcceptRole)
        self.add_button.setAutoDefault(False)
        self.cancel_button = self.buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        self.add_button.clicked.connect(self.accept_choice)
        self.cancel_button.clicked.connect(self.reject)
        column.addWidget(self.buttons)

    # --- tabs --------------------------------------------------------------------------

    def _blank_tab(self) -> QWidget:
        page = QWidget()
        form = QFormLayout(page)
        self.blank_name = QLineEdit()
        self.blank_name.setAccessibleName("server name")
        self.blank_kind = QComboBox()
        self.blank_kind.addItem("stdio (a local command)", "stdio")
        self.blank_kind.addItem("HTTP (a URL)", "http")
        self.blank_kind.setAccessibleName("transport")
        self.blank_target = QLineEdit()
        self.blank_target.setAccessibleName("command or URL")
        self.blank_target.setPlaceholderText("npx -y @modelcontextprotocol/server-everything")
        self.blank_kind.currentIndexChanged.connect(self._blank_kind_changed)
        form.addRow("Name:", self.blank_name)
        form.addRow("Kind:", self.blank_kind)
        form.addRow("Command or URL:", self.blank_target)
        return page

    def _blank_kind_changed(self) -> None:
        http = self.blank_kind.currentData() == "http"
        self.blank_target.setPlaceholderText(
            "https://mcp.example.com/mcp"
            if http
            else "npx -y @modelcontextprotocol/server-everything"
        )

    def _preset_tab(self) -> QWidget:
        page = QWidget()
        column = QVBoxLayout(page)
        self.preset_list = preset_list()
        self.preset_list.currentItemChanged.connect(self._preset_changed)
        column.addWidget(self.preset_list, 1)
        form = QFormLayout()
        self.preset_name = QLineEdit()
        self.preset_name.setAccessibleName("preset server name")
        form.addRow("Name:", self.preset_name)
        column.addLayout(form)
        return page

    def _preset_changed(self) -> None:
        item = self.preset_list.currentItem()
        if item is not None and not self.preset_name.isModified():
            self.preset_name.setText(str(item.data(Qt.ItemDataRole.UserRole)))

    def select_preset(self, name: str) -> None:
        for row in range(self.preset_list.count()):
            if self.preset_list.item(row).data(Qt.ItemDataRole.UserRole) == name:
                self.preset_list.setCurrentRow(row)

    def _import_tab(self) -> QWidget:
        from portico.config.importers import KINDS, label

        page = QWidget()
        column = QVBoxLayout(page)
        form = QFormLayout()
        self.import_kind = QComboBox()
        self.import_kind.setAccessibleName("import from")
        for kind in KINDS:
            self.import_kind.addItem(label(kind), kind)
        form.addRow("From:", self.import_kind)
        path_row = QHBoxLayout()
        self.import_path = QLineEdit()
        self.import_path.setAccessibleName("import file")
        self.import_path.setPlaceholderText("its usual place on this computer")
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        path_row.addWidget(self.import_path, 1)
        path_row.addWidget(browse)
        form.addRow("File:", path_row)
        column.addLayout(form)
        self.preview_button = QPushButton("Preview")
        self.preview_button.clicked.connect(self.preview_import)
        column.addWidget(self.preview_button, 0, Qt.AlignmentFlag.AlignLeft)
        self.import_list = QListWidget()
        self.import_list.setAccessibleName("servers to import")
        column.addWidget(self.import_list, 1)
        self.import_report: QPlainTextEdit = monospace_view("")
        self.import_report.setAccessibleName("import problems")
        self.import_report.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.import_report.setMaximumHeight(120)
        column.addWidget(self.import_report)
        return page

    def _browse(self) -> None:
        dialog = QFileDialog(self, "Import from")
        dialog.setFileMode(QFileDialog.FileMode.ExistingFile)
        dialog.fileSelected.connect(self.import_path.setText)
        dialog.open()  # never exec()

    def preview_import(self) -> asyncio.Task[None]:
        """Read the chosen client's file in a worker (a client's config can be megabytes:
        ``~/.claude.json`` keeps its history there), then list its servers."""
        self.import_list.clear()
        self.import_result = None
        self._previews += 1
        kind = str(self.import_kind.currentData())
        path = Path(self.import_path.text()).expanduser() if self.import_path.text() else None
        self.import_report.setPlainText("Reading…")
        return self.ops.spawn(
            self._preview(kind, path, self._previews),
            "Preview the import",
            failure=lambda exc: self.import_report.setPlainText(f"The preview failed: {exc}"),
        )

    async def _preview(self, kind: str, path: Path | None, preview: int) -> None:
        from portico.config.importers import ImportSourceError, import_servers

        try:
            result = await asyncio.to_thread(import_servers, kind, path, project=self.project)
        except (ImportSourceError, OSError, ValueError) as exc:
            if preview == self._previews:
                self.import_report.setPlainText(str(exc))
            return
        if preview != self._previews:
            return  # a later preview was asked for meanwhile
        self._show_import(result)

    def _show_import(self, result: Any) -> None:
        self.import_result = result
        for name, fields in result.servers:
            what = fields.get("url") or " ".join(
                [fields.get("command", ""), *fields.get("args", [])]
            )
            taken = name in self.taken
            mark = " (a server of that name exists)" if taken else ""
            item = QListWidgetItem(f"{name}{mark}  —  {what}")
            item.setToolTip(f"{name}: {what}")
            item.setData(Qt.ItemDataRole.UserRole, name)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Unchecked if taken else Qt.CheckState.Checked)
            self.import_list.addItem(item)
        lines = [f"{len(result.servers)} server(s) found in {result.source}."]
        lines += [f"problem: {p}" for p in result.problems]
        lines += [f"skipped: {s}" for s in result.skipped]
        lines += [f"note: {n}" for n in result.notes]
        lines += [
            f"secret: store it with `{s.command()}`"
            + (f" ({s.description})" if s.description else "")
            for s in result.secrets
        ]
        self.import_report.setPlainText("\n".join(lines))

    # --- answering ---------------------------------------------------------------------

    def servers(self) -> list[tuple[str, dict[str, Any]]]:
        """What the current tab would add; raises ValueError with what is wrong."""
        tab = self.tabs.tabText(self.tabs.currentIndex())
        if tab == BLANK:
            name = self.blank_name.text().strip()
            target = self.blank_target.text().strip()
            if not target:
                raise ValueError("enter the command to run or the server's URL")
            if self.blank_kind.currentData() == "http":
                return [(name, {"url": target})]
            import shlex

            try:
                parts = shlex.split(target)
            except ValueError as exc:
                raise ValueError(f"the command does not parse: {exc}") from None
            fields: dict[str, Any] = {"command": parts[0]}
            if parts[1:]:
                fields["args"] = parts[1:]
            return [(name, fields)]
        if tab == PRESET:
            item = self.preset_list.currentItem()
            if item is None:
                raise ValueError("choose a preset")
            preset = str(item.data(Qt.ItemDataRole.UserRole))
            return [(self.preset_name.text().strip(), preset_fields(preset, project=self.project))]
        if self.import_result is None:
            raise ValueError("choose what to import from, then Preview")
        chosen = []
        for row in range(self.import_list.count()):
            item = self.import_list.item(row)
            if item.checkState() == Qt.CheckState.Checked:
                name = str(item.data(Qt.ItemDataRole.UserRole))
                chosen.append((name, json.loads(json.dumps(self.import_result.fields(name)))))
        if not chosen:
            raise ValueError("tick at least one server to import")
        return chosen

    def accept_choice(self) -> None:
        try:
            servers = self.servers()
            for name, _fields in servers:
                problem = valid_server_name(name) if name else "give the server a name"
                if problem:
                    raise ValueError(problem)
                if name in self.taken:
                    raise ValueError(f"a server named {name!r} already exists; choose another name")
        except ValueError as exc:
            self.problem.setText(str(exc))
            self.problem.show()
            return
        self.chosen.emit(str(self.target.currentData()), servers)
        self.accept()
