"""Connect a model without the config editor: the local model servers found on this
computer first, then an OpenAI-compatible URL with its key, then an Anthropic key.

``chosen`` carries a :class:`ModelChoiceRequest`; the controller tests it with one tiny
completion, writes the provider (the key goes to the keychain) and reports back with
``connected`` or ``failed``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from portico.ui.dialogs.base import action_button
from portico.ui.palette import set_tone

if TYPE_CHECKING:
    from portico.chat.detect import DetectedServer
    from portico.chat.model_info import ModelInfo

ANTHROPIC_MODEL = "claude-sonnet-4-5"


@dataclass(frozen=True)
class ModelChoiceRequest:
    name: str  # provider name to write
    kind: str  # "openai" | "anthropic"
    base_url: str | None
    api_key: str  # "" when none; stored in the keychain, never written to the file
    model: str
    models: tuple[str, ...] = ()


class ModelFlow(QDialog):
    chosen = Signal(object)  # ModelChoiceRequest
    chatRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Connect a model")
        self.setAccessibleName("Connect a model")
        self.setModal(False)
        self.setMinimumWidth(520)
        column = QVBoxLayout(self)

        self.local_box = QGroupBox("On this computer")
        local = QVBoxLayout(self.local_box)
        self.local_note = QLabel("Looking for model servers on this computer…")
        self.local_note.setWordWrap(True)
        self.local_note.setAccessibleName("local servers")
        local.addWidget(self.local_note)
        self.local_rows = QVBoxLayout()
        local.addLayout(self.local_rows)
        self.local_buttons: list[QPushButton] = []
        self.local_models: list[QComboBox] = []
        self.local_details: list[QLabel] = []  # per server: the chosen model's details
        column.addWidget(self.local_box)

        openai = QGroupBox("An OpenAI-compatible server")
        form = QFormLayout(openai)
        self.openai_url = QLineEdit()
        self.openai_url.setAccessibleName("OpenAI-compatible URL")
        self.openai_url.setPlaceholderText("https://api.openai.com/v1")
        self.openai_key = QLineEdit()
        self.openai_key.setEchoMode(QLineEdit.EchoMode.Password)
        self.openai_key.setAccessibleName("OpenAI-compatible API key")
        self.openai_key.setPlaceholderText("optional for local servers")
        self.openai_model = QLineEdit()
        self.openai_model.setAccessibleName("OpenAI-compatible model")
        self.openai_model.setPlaceholderText("gpt-4.1-mini")
        form.addRow("&URL:", self.openai_url)
        form.addRow("&Key:", self.openai_key)
        form.addRow("M&odel:", self.openai_model)
        self.openai_button = QPushButton("Connect")
        self.openai_button.setAccessibleName("Connect OpenAI-compatible")
        self.openai_button.setAutoDefault(False)
        self.openai_button.clicked.connect(self._openai)
        form.addRow(self.openai_button)
        column.addWidget(openai)

        anthropic = QGroupBox("Anthropic")
        form = QFormLayout(anthropic)
        self.anthropic_key = QLineEdit()
        self.anthropic_key.setEchoMode(QLineEdit.EchoMode.Password)
        self.anthropic_key.setAccessibleName("Anthropic API key")
        self.anthropic_model = QLineEdit(ANTHROPIC_MODEL)
        self.anthropic_model.setAccessibleName("Anthropic model")
        form.addRow("K&ey:", self.anthropic_key)
        form.addRow("Mo&del:", self.anthropic_model)
        self.anthropic_button = QPushButton("Connect")
        self.anthropic_button.setAccessibleName("Connect Anthropic")
        self.anthropic_button.setAutoDefault(False)
        self.anthropic_button.clicked.connect(self._anthropic)
        form.addRow(self.anthropic_button)
        column.addWidget(anthropic)

        self.status = QLabel()
        self.status.setWordWrap(True)
        self.status.setAccessibleName("status")
        self.status.hide()
        column.addWidget(self.status)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(action_button("Close", self.close))
        self.chat_button = action_button("Start &chatting", self._start_chatting)
        self.chat_button.hide()
        row.addWidget(self.chat_button)
        column.addLayout(row)

    def _start_chatting(self) -> None:
        self.chatRequested.emit()
        self.close()

    # --- local servers -----------------------------------------------------------------

    def set_detected(self, servers: Sequence[DetectedServer]) -> None:
        """The model servers found on this computer, each with its models."""
        if not servers:
            self.local_note.setText(
                "No model server found on this computer (looked for Ollama, LM Studio and "
                "llama.cpp on their usual ports)."
            )
            return
        self.local_note.setText("Found:")
        for server in servers:
            line = QHBoxLayout()
            label = QLabel(f"<b>{server.label}</b> at {server.base_url}")
            line.addWidget(label, 1)
            models = QComboBox()
            models.setAccessibleName(f"{server.label} model")
            details = {d.id: d for d in server.details}
            for index, model in enumerate(server.models):
                models.addItem(model)
                if model in details and details[model].said:
                    models.setItemData(
                        index, details[model].detail_text, Qt.ItemDataRole.ToolTipRole
                    )
            line.addWidget(models)
            button = QPushButton("Use")
            button.setAccessibleName(f"Use {server.label}")
            button.setAutoDefault(False)
            button.clicked.connect(
                lambda _=False, s=server, m=models: self._emit(
                    ModelChoiceRequest(
                        s.name, "openai", s.base_url, "", m.currentText(), tuple(s.models)
                    )
                )
            )
            line.addWidget(button)
            self.local_rows.addLayout(line)
            self.local_buttons.append(button)
            self.local_models.append(models)
            about = QLabel()
            about.setWordWrap(True)
            about.setAccessibleName(f"{server.label} model details")
            self.local_rows.addWidget(about)
            self.local_details.append(about)
            models.currentTextChanged.connect(
                lambda model, a=about, d=details: _show_details(a, d.get(model))
            )
            _show_details(about, details.get(models.currentText()))

    # --- choices -----------------------------------------------------------------------

    def _openai(self) -> None:
        from urllib.parse import urlparse

        from portico.ui.onboarding.setup import provider_name

        url = self.openai_url.text().strip() or "https://api.openai.com/v1"
        model = self.openai_model.text().strip()
        if not url.startswith(("http://", "https://")):
            self.failed(
                "Enter the server's URL, starting with https:// (or http:// on this computer)."
            )
            return
        if not model:
            self.failed("Enter the model to use.")
            return
        host = urlparse(url).hostname or "openai"
        name = provider_name(_host_name(host))
        self._emit(ModelChoiceRequest(name, "openai", url, self.openai_key.text().strip(), model))

    def _anthropic(self) -> None:
        key = self.anthropic_key.text().strip()
        model = self.anthropic_model.text().strip() or ANTHROPIC_MODEL
        if not key:
            self.failed("Enter your Anthropic API key.")
            return
        self._emit(ModelChoiceRequest("anthropic", "anthropic", None, key, model))

    def _emit(self, request: ModelChoiceRequest) -> None:
        self.say(f"Testing {request.name} / {request.model}…", "muted")
        self._enable(False)
        self.chosen.emit(request)

    def _enable(self, on: bool) -> None:
        for button in (self.openai_button, self.anthropic_button, *self.local_buttons):
            button.setEnabled(on)

    def connected(self, ref: str, reply: str) -> None:
        self._enable(True)
        self.say(f"Connected: {ref} answered “{reply.strip()[:80]}”.", "ok")
        self.chat_button.show()
        self.chat_button.setFocus(Qt.FocusReason.OtherFocusReason)

    def failed(self, text: str) -> None:
        self._enable(True)
        self.say(text, "error")

    def say(self, text: str, tone: str) -> None:
        self.status.setText(text)
        set_tone(self.status, tone)  # type: ignore[arg-type]
        self.status.show()


def _show_details(label: QLabel, info: ModelInfo | None) -> None:
    """What the server said of the chosen model; a model that takes no tool calls is
    said so before it is chosen."""
    if info is None or not info.said:
        label.hide()
        return
    text = info.detail_text
    if info.tools is False:
        text += ": it can answer, but not use your servers' tools"
    label.setText(text)
    set_tone(label, "warning" if info.tools is False else "muted")
    label.show()


def _host_name(host: str) -> str:
    """ "openai" for api.openai.com, "local" for this computer, else the domain's name."""
    import ipaddress

    if host in ("localhost",) or host.endswith(".local"):
        return "local"
    try:
        ipaddress.ip_address(host)
    except ValueError:
        parts = [p for p in host.split(".") if p not in ("api", "www", "mcp")]
        return parts[-2] if len(parts) >= 2 else parts[0] if parts else "model"
    return "local"
