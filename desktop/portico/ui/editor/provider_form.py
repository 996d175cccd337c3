"""The Models tab's form for one model provider: kind, base URL, key reference (with a
key field that goes to the keychain), models, its default model, vision; each field shows
the validator's errors for its key."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from portico.config.model import Diagnostic
from portico.config.models_config import KINDS
from portico.config.models_edit import parse_number, parse_prices, prices_text
from portico.ui.editor.typed import TypedLines
from portico.ui.palette import set_tone

KEYCHAIN_TEXT = "Store in keychain"
TEST_TEXT = "Test &connection"
FETCH_TEXT = "Fetch &list…"


def _list_text(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return "" if value is None else str(value)


def _field_with_button(field: QWidget, button: QWidget) -> QWidget:
    row = QWidget()
    line = QHBoxLayout(row)
    line.setContentsMargins(0, 0, 0, 0)
    line.addWidget(field, 1)
    line.addWidget(button)
    return row


def _error_label(name: str) -> QLabel:
    label = QLabel()
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    label.setAccessibleName(f"{name} error")
    set_tone(label, "error")
    label.hide()
    return label


class ProviderForm(QWidget):
    """Emits ``edited(key, value)`` (value None removes the key), ``keyStored(value)`` for
    the Store in keychain button, ``testRequested()`` and ``fetchRequested()``."""

    edited = Signal(str, object)
    keyStored = Signal(str)
    testRequested = Signal()
    fetchRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("provider")
        self.provider: str | None = None
        self._filling = False
        self.typed = TypedLines(self)  # text typed in a field that still has focus
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        self.title = QLabel()
        self.title.setAccessibleName("provider title")
        column.addWidget(self.title)
        self.provider_errors = _error_label("provider")
        column.addWidget(self.provider_errors)
        self.form = QFormLayout()
        column.addLayout(self.form)
        self.errors: dict[str, QLabel] = {}

        self.kind = QComboBox()
        for kind in KINDS:
            self.kind.addItem(kind, kind)
        self.kind.setToolTip("openai: any OpenAI-compatible server; anthropic: the Messages API")
        self.kind.activated.connect(lambda _i: self._emit("kind", self.kind.currentData()))
        self.base_url = QLineEdit()
        self.base_url.setPlaceholderText("(the public API)  e.g. http://127.0.0.1:11434/v1")
        self.base_url.editingFinished.connect(
            lambda: self._emit("base_url", self.base_url.text().strip() or None)
        )
        self.api_key = QLineEdit()
        self.api_key.setPlaceholderText("(none)  ${keyring:NAME} or ${env:VAR}")
        self.api_key.setToolTip(
            "A reference to the key, never the key: the file keeps only this reference"
        )
        self.api_key.editingFinished.connect(
            lambda: self._emit("api_key", self.api_key.text().strip() or None)
        )
        self.key = QLineEdit()
        self.key.setEchoMode(QLineEdit.EchoMode.Password)
        self.key.setPlaceholderText("paste a key here to store it in the OS keychain")
        self.keychain_button = QPushButton(KEYCHAIN_TEXT)
        self.keychain_button.setToolTip(
            "Store the key in the OS keychain and write ${keyring:NAME} in the file"
        )
        self.keychain_button.clicked.connect(lambda: self.keyStored.emit(self.key.text()))
        self.key.returnPressed.connect(self.keychain_button.click)
        key_row = _field_with_button(self.key, self.keychain_button)
        self.models = QLineEdit()
        self.models.setPlaceholderText("gpt-4.1, gpt-4.1-mini")
        self.models.setToolTip("The models this provider offers, comma-separated")
        self.models.editingFinished.connect(self._emit_models)
        self.fetch_button = QPushButton(FETCH_TEXT)
        self.fetch_button.setToolTip("Ask the server which models it offers, and add one")
        self.fetch_button.clicked.connect(self.fetchRequested.emit)
        models_row = _field_with_button(self.models, self.fetch_button)
        self.default_model = QLineEdit()
        self.default_model.setPlaceholderText("(the first of models)")
        self.default_model.editingFinished.connect(
            lambda: self._emit("default_model", self.default_model.text().strip() or None)
        )
        self.vision = QCheckBox("The models take images")
        self.vision.toggled.connect(lambda on: self._emit("vision", True if on else None))
        self.prices = QLineEdit()
        self.prices.setPlaceholderText("(no prices)  e.g. gpt-4.1: 2 / 8, gpt-4.1-mini: 0.4 / 1.6")
        self.prices.setToolTip(
            "Price per million tokens, input / output, per model (in the provider's currency,"
            " USD unless set in the file): the chat shows each answer's cost"
        )
        self.prices.editingFinished.connect(
            lambda: self._emit("prices", parse_prices(self.prices.text()))
        )
        self.spend_limit = QLineEdit()
        self.spend_limit.setPlaceholderText("(no limit)  per chat, e.g. 1.50")
        self.spend_limit.setToolTip("A model request that could pass it asks first")
        self.spend_limit.editingFinished.connect(
            lambda: self._emit("spend_limit", parse_number(self.spend_limit.text()))
        )
        self.context_length = QLineEdit()
        self.context_length.setPlaceholderText("(unknown)  e.g. 128000")
        self.context_length.setToolTip("Tokens one request may hold: the context meter warns")
        self.context_length.editingFinished.connect(
            lambda: self._emit("context_length", parse_number(self.context_length.text()))
        )

        rows: list[tuple[str, str, QWidget, QWidget]] = [
            ("&Kind:", "kind", self.kind, self.kind),
            ("&Base URL:", "base_url", self.base_url, self.base_url),
            ("API key &reference:", "api_key", self.api_key, self.api_key),
            ("API ke&y:", "key", self.key, key_row),
            ("&Models:", "models", self.models, models_row),
            ("De&fault model:", "default_model", self.default_model, self.default_model),
            ("", "vision", self.vision, self.vision),
            ("&Prices:", "prices", self.prices, self.prices),
            ("Spend &limit:", "spend_limit", self.spend_limit, self.spend_limit),
            ("Conte&xt length:", "context_length", self.context_length, self.context_length),
        ]
        for text, key, editor, shown in rows:
            editor.setAccessibleName(key.replace("_", " "))
            holder = QWidget()
            inner = QVBoxLayout(holder)
            inner.setContentsMargins(0, 0, 0, 0)
            inner.setSpacing(2)
            inner.addWidget(shown)
            self.errors[key] = _error_label(key)
            inner.addWidget(self.errors[key])
            label = QLabel(text)
            label.setBuddy(editor)
            self.form.addRow(label, holder)
        self.keychain_button.setAccessibleName(f"{KEYCHAIN_TEXT}: api key")

        test_row = QHBoxLayout()
        self.test_button = QPushButton(TEST_TEXT)
        self.test_button.setToolTip("One tiny completion with these settings (nothing is saved)")
        self.test_button.clicked.connect(self.testRequested.emit)
        test_row.addWidget(self.test_button)
        self.test_result = QLabel()
        self.test_result.setWordWrap(True)
        self.test_result.setAccessibleName("test result")
        self.test_result.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        test_row.addWidget(self.test_result, 1)
        column.addLayout(test_row)
        column.addStretch(1)
        self.show_provider(None, None)

    def show_provider(self, name: str | None, fields: dict[str, Any] | None) -> None:
        self._filling = True
        try:
            self.provider = name
            has = name is not None and fields is not None
            for index in range(self.form.rowCount()):
                for role in (QFormLayout.ItemRole.LabelRole, QFormLayout.ItemRole.FieldRole):
                    item = self.form.itemAt(index, role)
                    widget = item.widget() if item is not None else None
                    if widget is not None:
                        widget.setEnabled(has)
            self.test_button.setEnabled(has)
            self.fetch_button.setEnabled(has)
            self.test_result.clear()
            self.key.clear()
            if not has:
                self.title.setText("Select a provider, or add one.")
                for field in self._lines():
                    field.clear()
                self.vision.setChecked(False)
                self.set_diagnostics([])
                return
            assert fields is not None
            self.title.setText(f"Provider {name}")
            kind = str(fields.get("kind", "")).lower()
            index = self.kind.findData(kind)
            if index < 0 and kind:
                self.kind.addItem(kind, kind)  # shown as written; the validator says why not
                index = self.kind.findData(kind)
            self.kind.setCurrentIndex(max(0, index))
            self.base_url.setText(_list_text(fields.get("base_url")))
            self.api_key.setText(_list_text(fields.get("api_key")))
            self.models.setText(_list_text(fields.get("models")))
            self.default_model.setText(_list_text(fields.get("default_model")))
            self.vision.setChecked(fields.get("vision") is True)
            self.prices.setText(prices_text(fields.get("prices")))
            self.spend_limit.setText(_list_text(fields.get("spend_limit")))
            self.context_length.setText(_list_text(fields.get("context_length")))
        finally:
            self._filling = False
            for line in self._lines():
                self.typed.watch(line)

    def set_diagnostics(self, diagnostics: list[Diagnostic]) -> None:
        """The validator's messages for this provider, under the field of their key."""
        per_key: dict[str, list[str]] = {}
        general: list[str] = []
        prefix = f"models.providers.{self.provider}"
        for d in diagnostics:
            key = d.key or ""
            if self.provider is None or not (key == prefix or key.startswith(prefix + ".")):
                continue
            leaf = key[len(prefix) + 1 :].split(".", 1)[0]
            if leaf in self.errors:
                per_key.setdefault(leaf, []).append(str(d))  # file:line: key: message
            else:
                general.append(str(d))
        for key, label in self.errors.items():
            label.setText("\n".join(per_key.get(key, [])))
            label.setVisible(key in per_key)
        self.provider_errors.setText("\n".join(general))
        self.provider_errors.setVisible(bool(general))

    def commit_pending(self, focused: QWidget | None) -> None:
        """Apply the field that still has focus (Ctrl+S while typing)."""
        if focused in self._lines():
            assert isinstance(focused, QLineEdit)
            focused.editingFinished.emit()

    def _lines(self) -> tuple[QLineEdit, ...]:
        return (
            self.base_url,
            self.api_key,
            self.models,
            self.default_model,
            self.prices,
            self.spend_limit,
            self.context_length,
        )

    def error_text(self, key: str) -> str:
        label = self.errors[key]
        return label.text() if not label.isHidden() else ""

    def _emit_models(self) -> None:
        names = [m.strip() for m in self.models.text().split(",") if m.strip()]
        self._emit("models", list(dict.fromkeys(names)) or None)

    def _emit(self, key: str, value: Any) -> None:
        if not self._filling and self.provider is not None:
            self.edited.emit(key, value)
