"""Elicitation: a form built from the server's requested JSON schema (or a URL to visit)."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QLabel, QWidget

from portico.prompts import ElicitationAnswer, ElicitationRequest
from portico.ui.dialogs.base import PromptDialog, selectable_label
from portico.ui.palette import set_tone
from portico.ui.schema_form import Field, SchemaForm

__all__ = ["ElicitationDialog", "Field"]


class ElicitationDialog(PromptDialog):
    def __init__(self, request: ElicitationRequest, parent: QWidget | None = None) -> None:
        super().__init__(request.server, "The server asks for information", parent)
        self.request = request
        self.message = selectable_label(request.message)
        self.message.setAccessibleName("message")
        self.layout_.addWidget(self.message)
        self.error_label = QLabel(request.error or "")
        set_tone(self.error_label, "error")
        self.error_label.setWordWrap(True)
        self.error_label.setAccessibleName("error")
        self.error_label.setVisible(bool(request.error))
        self.layout_.addWidget(self.error_label)
        self.fields: dict[str, Field] = {}
        if request.mode == "url":
            self.layout_.addWidget(QLabel("The server asks you to visit (not opened for you):"))
            self.url_label = selectable_label(request.url or "", mono=True)
            self.url_label.setAccessibleName("address")
            self.layout_.addWidget(self.url_label)
        else:
            self.form = SchemaForm(request.schema, request.defaults)
            self.fields = self.form.fields
            self.layout_.addWidget(self.form)
            if self.form.has_required:
                self.layout_.addWidget(QLabel("* required"))
        self.accept_button = self.add_button("&Accept", None)
        self.accept_button.clicked.disconnect()
        self.accept_button.clicked.connect(self._accept)
        self.decline_button = self.add_button(
            "&Decline", ElicitationAnswer("decline"), name="Decline"
        )
        self.cancel_button = self.add_button("Cancel", ElicitationAnswer("cancel"))
        self.finish_layout()

    def content(self) -> dict[str, Any]:
        return self.form.content() if self.fields else {}

    def missing(self) -> list[str]:
        return self.form.missing() if self.fields else []

    def _accept(self) -> None:
        if self.request.mode == "url":
            self.answer(ElicitationAnswer("accept"))
            return
        problems = self.form.problems()
        if problems:
            self.error_label.setText("\n".join(problems))
            self.error_label.show()
            return
        self.answer(ElicitationAnswer("accept", self.content()))

    def decline_value(self) -> ElicitationAnswer:
        return ElicitationAnswer("cancel")
