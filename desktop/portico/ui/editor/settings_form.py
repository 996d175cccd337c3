"""The editor's Settings tab: the top-level settings of one config file, built from the
schema's setting table (``portico.config.schema.SETTINGS``), so every setting a dialect
carries is editable, including ones added later (their type picks the widget; an
unknown type takes an inline value in the file's own syntax)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from portico.config import schema
from portico.config.editing import EditedFile
from portico.config.model import Dialect
from portico.config.schema import SettingSpec
from portico.ui.editor.typed import TypedLines

DEFAULT = "(default)"
INT_LIMIT = 2_000_000_000


def settings_for(dialect: Dialect) -> list[SettingSpec]:
    """The settings this dialect's file carries, in the schema's order."""
    return [
        s
        for s in schema.SETTINGS
        if (s.toml if dialect is Dialect.TOML else s.yaml) is not None and s.name != "version"
    ]


class SettingsForm(QWidget):
    """Edits a file's top-level settings; emits (name, value) with value None = unset."""

    edited = Signal(str, object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("settings")
        self.typed = TypedLines(self)  # text typed in a field that still has focus
        self.file: EditedFile | None = None
        self.widgets: dict[str, QWidget] = {}
        self._filling = False
        column = QVBoxLayout(self)
        self.title = QLabel("Settings of this file (empty: the default applies)")
        column.addWidget(self.title)
        self.form = QFormLayout()
        column.addLayout(self.form)
        column.addStretch(1)

    def show_file(self, file: EditedFile | None) -> None:
        self._filling = True
        try:
            while self.form.rowCount():
                self.form.removeRow(0)
            self.widgets = {}
            self.typed.forget()
            self.file = file
            if file is None or file.doc is None:
                self.title.setText("The file does not parse; fix it in its raw tab first.")
                return
            self.title.setText(f"Settings of {file.label} (empty: the default applies)")
            for spec in settings_for(file.dialect):
                widget = self._widget(spec, file.doc.get_setting(tuple(spec.name.split("."))))
                widget.setAccessibleName(spec.name)
                widget.setToolTip(f"{spec.help} (default: {self._default(spec)})")
                self.widgets[spec.name] = widget
                self.form.addRow(f"{spec.name}:", widget)
                if isinstance(widget, QLineEdit | QSpinBox):
                    self.typed.watch(widget)
        finally:
            self._filling = False

    def _widget(self, spec: SettingSpec, value: Any) -> QWidget:
        if spec.type == "int":
            spin = QSpinBox()
            low = int(spec.min) if spec.min is not None else 0
            spin.setRange(low - 1, int(spec.max) if spec.max is not None else INT_LIMIT)
            spin.setSpecialValueText(f"{DEFAULT}: {self._default(spec)}")
            spin.setValue(int(value) if isinstance(value, int) else low - 1)
            spin.editingFinished.connect(
                lambda s=spec, w=spin: self._emit(
                    s.name, None if w.value() == w.minimum() else w.value()
                )
            )
            return spin
        if spec.type in ("bool", "choice"):
            combo = QComboBox()
            combo.addItem(f"{DEFAULT}: {self._default(spec)}", None)
            options: list[Any] = [True, False] if spec.type == "bool" else list(spec.choices)
            for option in options:
                combo.addItem(str(option).lower() if spec.type == "bool" else option, option)
            index = combo.findData(value) if value is not None else 0
            combo.setCurrentIndex(max(0, index))
            combo.activated.connect(lambda _i, s=spec, w=combo: self._emit(s.name, w.currentData()))
            return combo
        line = QLineEdit("" if value is None else self._inline(value))
        line.setPlaceholderText(f"{DEFAULT}: {self._default(spec)}")
        line.editingFinished.connect(lambda s=spec, w=line: self._emit_text(s, w.text()))
        return line

    def _default(self, spec: SettingSpec) -> str:
        """The default as a person reads it, written as the file's dialect writes it."""
        value = spec.default
        if value is None:
            return "not set"
        if isinstance(value, (tuple, list, dict)) and not value:
            return "empty"
        if isinstance(value, (tuple, list)):
            value = list(value)
        return self._inline(value)

    def _inline(self, value: Any) -> str:
        return value if isinstance(value, str) else (self.file.inline(value) if self.file else "")

    def _emit_text(self, spec: SettingSpec, text: str) -> None:
        text = text.strip()
        if not text:
            self._emit(spec.name, None)
        elif spec.type == "string":
            self._emit(spec.name, text)
        elif self.file is not None:
            self._emit(spec.name, self.file.parse_value(text))

    def _emit(self, name: str, value: Any) -> None:
        if not self._filling:
            self.edited.emit(name, value)
