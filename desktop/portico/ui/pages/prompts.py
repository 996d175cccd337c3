"""The Prompts tab: the server's prompts with their arguments; fill them and Get shows
the messages the server returns."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QFormLayout,
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
from portico.ui.runtime_thread.snapshots import PromptInfo
from portico.ui.shortcuts import WHERE


def _signature(prompt: PromptInfo) -> str:
    args = ", ".join(a.name + ("*" if a.required else "") for a in prompt.arguments)
    return f"{prompt.title or prompt.name}({args})"


PROMPT_COLUMNS: tuple[Column[PromptInfo], ...] = (
    Column(
        "Prompt",
        _signature,
        lambda p: p.description or None,
        stretch=True,
        decoration=lambda p: announced_icon(p.icon),
    ),
)


class PromptsPage(QWidget):
    def __init__(self, backend: PageBackend, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.backend = backend
        self.server: str | None = None
        self.fields: dict[str, QLineEdit] = {}
        self.setAccessibleName("prompts")
        self.model: ItemsModel[PromptInfo] = ItemsModel(PROMPT_COLUMNS, self)
        self.list = items_view(self.model, "prompt list")
        self.list.selectionModel().currentRowChanged.connect(lambda *_: self._show_prompt())
        self.status = status_label("prompts status")
        self.status.setText("Prompts appear here once the server is running.")
        self.description = status_label("prompt description")
        self.form_host = QWidget()
        self.form = QFormLayout(self.form_host)
        self.get_button = QPushButton("&Get")
        self.get_button.setAccessibleName("Get prompt")
        self.get_button.setShortcut("Ctrl+Return")
        self.get_button.setProperty(WHERE, "Servers: Prompts")
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

    @property
    def prompts(self) -> list[PromptInfo]:
        return self.model.items

    def set_loading(self, server: str | None) -> None:
        self.server = server
        self.model.set_items([])
        self.status.setText("Loading prompts…" if server else "No server selected.")
        self._show_prompt()

    def set_error(self, text: str) -> None:
        self.status.setText(text)

    def set_prompts(self, server: str, prompts: list[PromptInfo]) -> None:
        self.server = server
        self.model.set_items(prompts)
        self.status.setText(
            f"{len(prompts)} prompt(s)" if prompts else "This server offers no prompts."
        )
        if prompts:
            set_current_row(self.list, 0)
        self._show_prompt()

    def selected(self) -> PromptInfo | None:
        return self.model.item(current_row(self.list))

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
            edit.returnPressed.connect(self.get_selected)
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
        server, name = self.server, prompt.name
        (
            self.backend.op(lambda pages: pages.get_prompt(server, name, args), f"Get {name}")
            .success(lambda result: self._got(server, name, result))
            .failure(lambda exc: self._failed(server, exc))
            .finally_(lambda: self.get_button.setEnabled(self.selected() is not None))
            .run()
        )

    def _failed(self, server: str, exc: Exception) -> None:
        if self.server == server:
            self.result_view.show_message(f"{type(exc).__name__}: {exc}", error=True)

    def _got(self, server: str, name: str, result: ToolResult) -> None:
        selected = self.selected()
        if self.server == server and selected is not None and selected.name == name:
            self.result_view.show_result(result)
