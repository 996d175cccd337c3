"""The chat settings panel: the shown chat's own system prompt and model settings.

Widgets only: Save emits the fields as typed (``"": the provider's``); the controller
validates them in the core (``portico.chat.settings.parse``) and shows a refusal in
:attr:`ChatSettingsPanel.error`.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from portico.chat.settings import REASONING_EFFORTS, ChatSettings
from portico.ui.palette import set_tone

_PROVIDERS = "the provider's"


class ChatSettingsPanel(QWidget):
    saved = Signal(dict)  # field name -> text as typed
    closed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("chat settings")
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        form = QFormLayout()
        self.system_prompt = QPlainTextEdit()
        self.system_prompt.setAccessibleName("system prompt")
        self.system_prompt.setPlaceholderText("Instructions for this chat (after Portico's own)")
        self.system_prompt.setMaximumHeight(90)
        form.addRow("System prompt", self.system_prompt)
        self.temperature = QLineEdit()
        self.temperature.setAccessibleName("temperature")
        self.temperature.setPlaceholderText(f"{_PROVIDERS} (0 to 2)")
        form.addRow("Temperature", self.temperature)
        self.max_tokens = QLineEdit()
        self.max_tokens.setAccessibleName("max tokens")
        self.max_tokens.setPlaceholderText(_PROVIDERS)
        form.addRow("Max tokens", self.max_tokens)
        self.reasoning_effort = QComboBox()
        self.reasoning_effort.setAccessibleName("reasoning effort")
        self.reasoning_effort.addItem(_PROVIDERS, "")
        for effort in REASONING_EFFORTS:
            self.reasoning_effort.addItem(effort, effort)
        form.addRow("Reasoning effort", self.reasoning_effort)
        self.thinking_budget = QLineEdit()
        self.thinking_budget.setAccessibleName("thinking budget")
        self.thinking_budget.setPlaceholderText("off (at least 1024 tokens)")
        form.addRow("Thinking budget", self.thinking_budget)
        column.addLayout(form)
        self.applies = QLabel()
        self.applies.setAccessibleName("settings that apply")
        self.applies.setWordWrap(True)
        set_tone(self.applies, "muted")
        column.addWidget(self.applies)
        self.error = QLabel()
        self.error.setAccessibleName("settings error")
        self.error.setWordWrap(True)
        self.error.setVisible(False)
        set_tone(self.error, "error")
        column.addWidget(self.error)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        self.cancel_button = QPushButton("Close")
        self.cancel_button.setAutoDefault(False)
        self.cancel_button.setAccessibleName("Close chat settings")
        self.cancel_button.clicked.connect(self._close)
        buttons.addWidget(self.cancel_button)
        self.save_button = QPushButton("Save")
        self.save_button.setAutoDefault(False)
        self.save_button.setAccessibleName("Save chat settings")
        self.save_button.clicked.connect(self._save)
        buttons.addWidget(self.save_button)
        column.addLayout(buttons)

    def show_settings(self, settings: ChatSettings, kind: str) -> None:
        """Fill the fields from the chat's settings; ``kind``: its provider's kind."""
        self.system_prompt.setPlainText(settings.system_prompt or "")
        self.temperature.setText(
            "" if settings.temperature is None else f"{settings.temperature:g}"
        )
        self.max_tokens.setText("" if settings.max_tokens is None else str(settings.max_tokens))
        index = self.reasoning_effort.findData(settings.reasoning_effort or "")
        self.reasoning_effort.setCurrentIndex(max(index, 0))
        budget = settings.thinking_budget
        self.thinking_budget.setText("" if budget is None else str(budget))
        self.reasoning_effort.setEnabled(kind != "anthropic")
        self.thinking_budget.setEnabled(kind != "openai")
        if kind == "openai":
            self.applies.setText("This chat's provider takes a reasoning effort, not a budget.")
        elif kind == "anthropic":
            self.applies.setText("This chat's provider takes a thinking budget, not an effort.")
        else:
            self.applies.setText("No model: the settings apply once the chat has one.")
        self.show_error("")

    def show_error(self, text: str) -> None:
        self.error.setText(text)
        self.error.setVisible(bool(text))

    def _save(self) -> None:
        self.saved.emit(
            {
                "system_prompt": self.system_prompt.toPlainText(),
                "temperature": self.temperature.text(),
                "max_tokens": self.max_tokens.text(),
                "reasoning_effort": str(self.reasoning_effort.currentData() or ""),
                "thinking_budget": self.thinking_budget.text(),
            }
        )

    def _close(self) -> None:
        self.setVisible(False)
        self.closed.emit()
