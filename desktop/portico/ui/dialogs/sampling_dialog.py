"""Sampling review: what the server wants the model to read; Approve, Edit, or Deny."""

from __future__ import annotations

from PySide6.QtWidgets import QFormLayout, QLabel, QPlainTextEdit, QSpinBox, QWidget

from portico.prompts import SamplingAnswer, SamplingMessage, SamplingRequest
from portico.ui.dialogs.base import PromptDialog, selectable_label
from portico.ui.text import plain


class SamplingDialog(PromptDialog):
    def __init__(self, request: SamplingRequest, parent: QWidget | None = None) -> None:
        super().__init__(request.server, "The server asks to use the model", parent)
        self.request = request
        self.editing = False
        form = QFormLayout()
        model = request.model
        if request.requested_model and request.requested_model != request.model:
            model += f" (the server asked for {request.requested_model})"
        self.model_label = selectable_label(model)
        self.model_label.setAccessibleName("model")
        form.addRow("Model:", self.model_label)
        self.max_tokens = QSpinBox()
        self.max_tokens.setRange(1, 10_000_000)
        self.max_tokens.setValue(request.max_tokens)
        self.max_tokens.setReadOnly(True)
        self.max_tokens.setAccessibleName("token cap")
        form.addRow("Token cap:", self.max_tokens)
        self.layout_.addLayout(form)
        self.system_edit: QPlainTextEdit | None = None
        if request.system_prompt is not None:
            self.layout_.addWidget(QLabel("System prompt:"))
            self.system_edit = _text(request.system_prompt, "system prompt")
            self.layout_.addWidget(self.system_edit)
        self.message_edits: list[tuple[str, QPlainTextEdit]] = []
        for index, message in enumerate(request.messages, 1):
            self.layout_.addWidget(QLabel(f"{message.role.capitalize()} message {index}:"))
            edit = _text(message.text, f"{message.role} message {index}")
            self.message_edits.append((message.role, edit))
            self.layout_.addWidget(edit, 1)
        self.approve_button = self.add_button("A&pprove", None)
        self.approve_button.clicked.disconnect()
        self.approve_button.clicked.connect(self._approve)
        self.edit_button = self.add_button("&Edit", None)
        self.edit_button.clicked.disconnect()
        self.edit_button.clicked.connect(self.start_editing)
        self.deny_button = self.add_button("&Deny", SamplingAnswer("deny"), name="Deny")
        self.finish_layout()
        self.deny_button.setFocus()
        self.resize(560, 460)

    def start_editing(self) -> None:
        self.editing = True
        self.max_tokens.setReadOnly(False)
        if self.system_edit is not None:
            self.system_edit.setReadOnly(False)
        for _, edit in self.message_edits:
            edit.setReadOnly(False)
        self.edit_button.setEnabled(False)
        self.approve_button.setText("A&pprove edited")
        if self.message_edits:
            self.message_edits[-1][1].setFocus()

    def _approve(self) -> None:
        if not self.editing:
            self.answer(SamplingAnswer("approve"))
            return
        messages = tuple(
            SamplingMessage(role=role, text=edit.toPlainText())  # type: ignore[arg-type]
            for role, edit in self.message_edits
        )
        self.answer(
            SamplingAnswer(
                "approve",
                messages=messages,
                system_prompt=self.system_edit.toPlainText() if self.system_edit else None,
                max_tokens=self.max_tokens.value(),
            )
        )

    def decline_value(self) -> SamplingAnswer:
        return SamplingAnswer("deny")


def _text(text: str, name: str) -> QPlainTextEdit:
    edit = QPlainTextEdit(plain(text, multiline=True))
    edit.setReadOnly(True)
    edit.setAccessibleName(name)
    edit.setMaximumHeight(140)
    return edit
