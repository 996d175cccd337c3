"""No sandbox on this machine: run a server that should be sandboxed without one?
Enter answers nothing; closing the window says no."""

from __future__ import annotations

from PySide6.QtWidgets import QPushButton, QWidget

from portico.prompts import UnsandboxedRequest
from portico.text import visible
from portico.ui.dialogs.base import PromptDialog, selectable_label


class UnsandboxedDialog(PromptDialog):
    def __init__(self, request: UnsandboxedRequest, parent: QWidget | None = None) -> None:
        title = "Run with the network not filtered?" if request.weaker else "Run without a sandbox?"
        super().__init__(request.server, title, parent)
        self.request = request
        self.question_label = selectable_label(visible(request.question))
        self.question_label.setWordWrap(True)
        self.question_label.setAccessibleName("question")
        self.layout_.addWidget(self.question_label)
        self.yes_button = QPushButton("Run &Anyway" if request.weaker else "Run &Unsandboxed")
        self.no_button = QPushButton("&Don't Run")
        for button, value in ((self.yes_button, True), (self.no_button, False)):
            button.setAccessibleName(button.text().replace("&", ""))
            button.setAutoDefault(False)
            button.setDefault(False)
            button.clicked.connect(lambda _=False, v=value: self.answer(v))
            self.buttons_row.addWidget(button)
        self.finish_layout()
        self.no_button.setFocus()

    def decline_value(self) -> bool:
        return False
