"""The Prompts tab: the server's prompts with their arguments; fill them and Get shows
the messages the server returns."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from portico.ui.pages.common import PageBackend, status_label
from portico.ui.pages.result_view import ResultView
from portico.ui.runtime_thread.snapshots import PromptInfo


class PromptsPage(QWidget):
    def __init__(self, backend: PageBackend, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.backend = backend
        self.server: str | None = None
        self.prompts: list[PromptInfo] = []
        self.fields: dict[str, QLineEdit] = {}
        self.setAccessibleName("prompts")
        self.list = QListWidget()
        self.list.setAccessibleName("prompt list")
        self.list.currentRowChanged.connect(lambda _row: self._show_prompt())
        self.status = status_label("prompts status")
        self.status.setText("Prompts appear here once the server is running.")
        self.description = status_label("prompt description")
        self.form_host = QWidget()
        self.form = QFormLayout(self.form_host)
        self.get_button = QPushButton("&Get")
        self.get_button.setAccessibleName("Get prompt")
        self.get_button.setShortcut("Ctrl+Return")
        self.get_button.clicked.connect(self.get_selected)
        self.get_button.setEnabled(False)
        self.result_view = ResultView("prompt messages")

        left = QWidget()
        left_col = QVBoxLayout(left)
        left_col.setContentsMargins(0, 0, 0, 0)
        left_col.addWidget(self.status)
        left_col.addWidget(self.list, 1)
        right = QWidget()
        right_col = QVBoxLayout(right)
        right_col.setContentsMargins(0, 0, 0, 0)
        right_col.addWidget(self.description)
        right_col.addWidget(self.form_host)
        row = QHBoxLayout()
        row.addWidget(self.get_button)
        row.addStretch(1)
        right_col.addLayout(row)
        right_col.addWidget(QLabel("Messages:"))
        right_col.addWidget(self.result_view, 1)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(left)
        splitter.addWidget(right)
        splitter.setSizes([260, 540])
        column = QVBoxLayout(self)
        column.setContentsMargins(4, 4, 4, 4)
        column.addWidget(splitter)

    def set_loading(self, server: str | None) -> None:
        self.server = server
        self.prompts = []
        self.list.clear()
        self.status.setText("Loading prompts…" if server else "No server selected.")
        self._show_prompt()

    def set_error(self, text: str) -> None:
        self.status.setText(text)

    def set_prompts(self, server: str, prompts: list[PromptInfo]) -> None:
        self.server = server
        self.prompts = list(prompts)
        self.list.clear()
        for prompt in prompts:
            args = ", ".join(a.name + ("*" if a.required else "") for a in prompt.arguments)
            item = QListWidgetItem(f"{prompt.title or prompt.name}({args})")
            item.setToolTip(prompt.description)
            self.list.addItem(item)
        self.status.setText(
            f"{len(prompts)} prompt(s)" if prompts else "This server offers no prompts."
        )
        if prompts:
            self.list.setCurrentRow(0)
        self._show_prompt()

    def selected(self) -> PromptInfo | None:
        row = self.list.currentRow()
        return self.prompts[row] if 0 <= row < len(self.prompts) else None

    def _show_prompt(self) -> None:
        prompt = self.selected()
        while self.form.rowCount():
            self.form.removeRow(0)
        self.fields = {}
        self.result_view.clear()
        self.get_button.setEnabled(prompt is not None)
        if prompt is None:
            self.description.clear()
            return
        self.description.setText(prompt.description or prompt.name)
        for arg in prompt.arguments:
            edit = QLineEdit()
            edit.setAccessibleName(arg.name)
            if arg.description:
                edit.setToolTip(arg.description)
                edit.setPlaceholderText(arg.description)
            self.fields[arg.name] = edit
            self.form.addRow(f"{arg.name}{' *' if arg.required else ''}:", edit)

    def get_selected(self) -> None:
        prompt = self.selected()
        if prompt is None or self.server is None:
            return
        missing = [
            a.name for a in prompt.arguments if a.required and not self.fields[a.name].text()
        ]
        if missing:
            self.result_view.show_message("Please fill in: " + ", ".join(missing), error=True)
            return
        args = {name: edit.text() for name, edit in self.fields.items() if edit.text()}
        self.get_button.setEnabled(False)
        self.result_view.show_message(f"Getting {prompt.name}…")
        self.backend.spawn(self._get(self.server, prompt.name, args))

    async def _get(self, server: str, name: str, args: dict[str, str]) -> None:
        try:
            result = await self.backend.run("get_prompt", server, name, args)
        except Exception as exc:
            if self.server == server:
                self.result_view.show_message(f"{type(exc).__name__}: {exc}", error=True)
            return
        finally:
            self.get_button.setEnabled(True)
        if self.server == server and self.selected() and self.selected().name == name:  # type: ignore[union-attr]
            self.result_view.show_result(result)
