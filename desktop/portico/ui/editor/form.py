"""The per-server form: every key of ``schema.KEYS``, grouped like ``schema.GROUPS``.

The form never touches a file: it emits what the person changed (``edited`` /
``entryEdited``) and the window applies that to the round-trip document. Values are shown
as the file's dialect writes them (TOML durations in milliseconds); defaults are
placeholders; a field's errors are the CLI's diagnostics for that key, word for word.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QTableWidget,
    QTableWidgetItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from portico.config import schema
from portico.config.editing import EditedFile
from portico.config.model import Diagnostic, Dialect
from portico.config.schema import KeySpec
from portico.config.secrets import has_references
from portico.ui.palette import set_tone, tone_color


class _Unset:
    def __repr__(self) -> str:
        return "UNSET"


UNSET: Any = _Unset()
KEYCHAIN_TEXT = "Store in keychain"
# Secret scalars besides the ``secret=True`` keys: the client certificate's password.
KEYCHAIN_KEYS = ("client_cert",)


def placeholder(spec: KeySpec, dialect: Dialect) -> str:
    if spec.default is None or spec.default in ((), {}):
        return "not set"
    value = spec.to_dialect(spec.default, dialect)
    if isinstance(value, bool):
        return f"default: {'true' if value else 'false'}"
    return f"default: {schema.fmt(value)}"


def label_text(spec: KeySpec, dialect: Dialect) -> str:
    text = ".".join(spec.path(dialect))
    unit = spec.unit(dialect)
    if unit:
        text += " (ms)" if unit == "milliseconds" else " (s)"
    return text


class FieldEditor(QWidget):
    """One key: its editor, an optional keychain button and the error line under it."""

    edited = Signal(object)  # the new value, or UNSET to remove the key
    typing = Signal()  # the typed text changed; not yet applied to the file
    keychainRequested = Signal(str, str)  # entry ("" for the key itself), value

    def __init__(self, spec: KeySpec) -> None:
        super().__init__()
        self.spec = spec
        self.file: EditedFile | None = None
        self.value: Any = None
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(2)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        column.addLayout(row)
        self.editor = self._make_editor()
        self.editor.setAccessibleName(spec.name)
        self.editor.setToolTip(spec.help)
        row.addWidget(self.editor, 1)
        self.keychain_button: QPushButton | None = None
        if (spec.secret or spec.name in KEYCHAIN_KEYS) and spec.type != "mapping":
            self.keychain_button = QPushButton(KEYCHAIN_TEXT)
            self.keychain_button.setAccessibleName(f"{KEYCHAIN_TEXT}: {spec.name}")
            self.keychain_button.clicked.connect(self._keychain)
            row.addWidget(self.keychain_button)
        self.error_label = QLabel()
        self.error_label.setWordWrap(True)
        self.error_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        set_tone(self.error_label, "error")
        self.error_label.setAccessibleName(f"{spec.name} error")
        self.error_label.hide()
        column.addWidget(self.error_label)

    # --- building ----------------------------------------------------------------------

    def _make_editor(self) -> QWidget:
        if self.spec.type in ("bool", "choice"):
            combo = QComboBox()
            combo.activated.connect(lambda _i: self._commit_combo())
            return combo
        line = QLineEdit()
        line.editingFinished.connect(self._commit_line)
        line.textEdited.connect(lambda _t: self.typing.emit())
        return line

    @property
    def pending(self) -> bool:
        """Typed text that differs from the file's value and is not applied yet."""
        return (
            self.file is not None
            and isinstance(self.editor, QLineEdit)
            and self.editor.text() != self._text(self.value)
        )

    # --- showing -----------------------------------------------------------------------

    def show_value(self, file: EditedFile, value: Any) -> None:
        self.file = file
        self.value = value
        dialect = file.dialect
        if isinstance(self.editor, QComboBox):
            combo = self.editor
            combo.blockSignals(True)
            combo.clear()
            combo.addItem(placeholder(self.spec, dialect).replace("not set", "(not set)"), UNSET)
            options: list[Any] = (
                [True, False] if self.spec.type == "bool" else list(self.spec.choices)
            )
            for option in options:
                combo.addItem(self._text(option), option)
            if value is not None and value not in options:
                combo.addItem(self._text(value), value)  # a bad value stays visible
            index = 0 if value is None else combo.findData(value)
            if index < 0:  # bool True == 1: findData may miss; search by text
                index = combo.findText(self._text(value))
            combo.setCurrentIndex(max(index, 0))
            combo.blockSignals(False)
        elif isinstance(self.editor, QLineEdit):
            self.editor.setPlaceholderText(placeholder(self.spec, dialect))
            self.editor.setText(self._text(value))
            self.editor.setCursorPosition(0)

    def _text(self, value: Any) -> str:
        if value is None:
            return ""
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, str):
            return value
        if isinstance(value, int | float):
            return schema.fmt(value)
        if (
            isinstance(value, list)
            and self.spec.type in ("string_list", "command")
            and all(isinstance(v, str) and "," not in v and '"' not in v for v in value)
        ):
            return ", ".join(value)
        assert self.file is not None
        return self.file.inline(value)

    def set_errors(self, messages: list[str]) -> None:
        self.error_label.setText("\n".join(messages))
        self.error_label.setVisible(bool(messages))

    @property
    def error_text(self) -> str:
        return self.error_label.text() if not self.error_label.isHidden() else ""

    # --- committing --------------------------------------------------------------------

    def parse(self, text: str) -> Any:
        """What the typed ``text`` means for this key (UNSET when empty)."""
        assert self.file is not None
        kind = self.spec.type
        if not text.strip():
            return UNSET
        if kind == "string":
            return text
        stripped = text.strip()
        as_list = kind == "string_list" or (kind == "command" and self.file.dialect is Dialect.TOML)
        if as_list and not stripped.startswith("["):
            return [part.strip() for part in stripped.split(",") if part.strip()]
        if kind == "command":
            return stripped if not stripped.startswith("[") else self.file.parse_value(stripped)
        if kind == "client_cert" and not stripped.startswith("["):
            return stripped
        return self.file.parse_value(stripped)

    def _commit_line(self) -> None:
        if self.file is None or not isinstance(self.editor, QLineEdit):
            return
        if self.editor.text() == self._text(self.value):
            return
        self._emit(self.parse(self.editor.text()))

    def _commit_combo(self) -> None:
        if isinstance(self.editor, QComboBox):
            self._emit(self.editor.currentData())

    def _emit(self, value: Any) -> None:
        if (value is UNSET and self.value is None) or (
            value is not UNSET and value == self.value and type(value) is type(self.value)
        ):
            return
        self.value = None if value is UNSET else value
        self.edited.emit(value)

    def _keychain(self) -> None:
        value = self.value
        if isinstance(value, list) and self.spec.name == "client_cert":
            value = value[2] if len(value) > 2 else ""  # [cert, key, password]
        self.keychainRequested.emit("", "" if value is None else str(value))


class MappingEditor(FieldEditor):
    """env / headers: one row per entry; each change is emitted per entry."""

    entryEdited = Signal(str, object)  # entry name, value or UNSET

    def _make_editor(self) -> QWidget:
        box = QWidget()
        column = QVBoxLayout(box)
        column.setContentsMargins(0, 0, 0, 0)
        self.table = QTableWidget(0, 2)
        self.table.setHorizontalHeaderLabels(["Name", "Value"])
        self.table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.table.verticalHeader().hide()
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self._fit_table()
        self.table.itemChanged.connect(lambda _item: self._commit_table())
        column.addWidget(self.table)
        buttons = QHBoxLayout()
        self.add_button = QPushButton("Add")
        self.add_button.setAccessibleName(f"add {self.spec.name} entry")
        self.add_button.clicked.connect(self.add_row)
        self.remove_button = QPushButton("Remove")
        self.remove_button.setAccessibleName(f"remove {self.spec.name} entry")
        self.remove_button.clicked.connect(self._remove_row)
        buttons.addWidget(self.add_button)
        buttons.addWidget(self.remove_button)
        if self.spec.secret:
            self.entry_keychain = QPushButton(KEYCHAIN_TEXT)
            self.entry_keychain.setAccessibleName(f"{KEYCHAIN_TEXT}: {self.spec.name}")
            self.entry_keychain.setToolTip(
                "Move the selected value into the OS keychain and write a "
                "${keyring:NAME} reference instead"
            )
            self.entry_keychain.clicked.connect(self._entry_keychain)
            buttons.addWidget(self.entry_keychain)
        buttons.addStretch(1)
        column.addLayout(buttons)
        self.entries: dict[str, str] = {}
        return box

    def show_value(self, file: EditedFile, value: Any) -> None:
        self.file = file
        self.value = value
        entries = value if isinstance(value, dict) else {}
        self.entries = {str(k): "" if v is None else str(v) for k, v in entries.items()}
        self.table.blockSignals(True)
        self.table.setRowCount(0)
        self._fit_table()
        for name, text in self.entries.items():
            self._append(name, text)
        self.table.blockSignals(False)

    def _append(self, name: str, text: str) -> int:
        row = self.table.rowCount()
        self.table.insertRow(row)
        self.table.setItem(row, 0, QTableWidgetItem(name))
        value = QTableWidgetItem(text)
        self._mark_plain(value)
        self.table.setItem(row, 1, value)
        self._fit_table()
        return row

    def _mark_plain(self, item: QTableWidgetItem) -> None:
        """Flag a literal value of a secret-capable key: it sits in the file as typed."""
        if self.spec.secret and item.text() and not has_references(item.text()):
            item.setToolTip(
                "Plain text in the config file. If this is a secret, select the row and "
                f"use {KEYCHAIN_TEXT}: the file then holds a ${{keyring:NAME}} reference."
            )
            item.setForeground(QBrush(tone_color("warning")))
        else:
            item.setToolTip("")
            item.setData(Qt.ItemDataRole.ForegroundRole, None)

    def _fit_table(self) -> None:
        """As tall as its rows (one empty row at least), at most five rows."""
        rows = min(max(self.table.rowCount(), 1), 5)
        height = self.table.horizontalHeader().sizeHint().height()
        height += rows * self.table.verticalHeader().defaultSectionSize() + 4
        self.table.setFixedHeight(height)

    def add_row(self) -> None:
        row = self._append("", "")
        self.table.setCurrentCell(row, 0)
        item = self.table.item(row, 0)
        assert item is not None  # _append filled the row
        self.table.editItem(item)

    def set_entry(self, row: int, name: str, value: str) -> None:
        """Type into one row (what a person does; tests call it too)."""
        while self.table.rowCount() <= row:
            self._append("", "")
        name_item, value_item = self.table.item(row, 0), self.table.item(row, 1)
        assert name_item is not None and value_item is not None  # _append filled the row
        self.table.blockSignals(True)
        name_item.setText(name)
        self.table.blockSignals(False)
        value_item.setText(value)

    def _rows(self) -> dict[str, str]:
        rows: dict[str, str] = {}
        for row in range(self.table.rowCount()):
            name_item, value_item = self.table.item(row, 0), self.table.item(row, 1)
            name = name_item.text().strip() if name_item else ""
            if name:
                rows[name] = value_item.text() if value_item else ""
        return rows

    def _commit_table(self) -> None:
        if self.file is None:
            return
        self.table.blockSignals(True)
        for row in range(self.table.rowCount()):
            item = self.table.item(row, 1)
            if item is not None:
                self._mark_plain(item)
        self.table.blockSignals(False)
        now = self._rows()
        before = self.entries
        self.entries = now
        for name in before:
            if name not in now:
                self.entryEdited.emit(name, UNSET)
        for name, text in now.items():
            if before.get(name) != text:
                self.entryEdited.emit(name, text)

    def _remove_row(self) -> None:
        row = self.table.currentRow()
        if row >= 0:
            self.table.removeRow(row)
            self._fit_table()
            self._commit_table()

    def select_entry(self, name: str) -> None:
        for row in range(self.table.rowCount()):
            item = self.table.item(row, 0)
            if item is not None and item.text() == name:
                self.table.setCurrentCell(row, 1)

    def _entry_keychain(self) -> None:
        row = self.table.currentRow()
        if row < 0:
            return
        name_item, value_item = self.table.item(row, 0), self.table.item(row, 1)
        if name_item and name_item.text().strip():
            self.keychainRequested.emit(
                name_item.text().strip(), value_item.text() if value_item else ""
            )


class Section(QWidget):
    """A collapsible group of fields."""

    def __init__(self, title: str) -> None:
        super().__init__()
        self.title = title
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 4, 0, 4)
        self.toggle = QToolButton()
        self.toggle.setText(title)
        self.toggle.setCheckable(True)
        self.toggle.setChecked(True)
        self.toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.toggle.setArrowType(Qt.ArrowType.DownArrow)
        self.toggle.setStyleSheet("QToolButton { border: none; font-weight: bold; }")
        self.toggle.setAccessibleName(f"{title} section")
        self.toggle.toggled.connect(self.set_expanded)
        column.addWidget(self.toggle)
        self.body = QWidget()
        self.layout_ = QFormLayout(self.body)
        self.layout_.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.layout_.setContentsMargins(18, 0, 0, 0)
        column.addWidget(self.body)

    def set_expanded(self, expanded: bool) -> None:
        self.toggle.setChecked(expanded)
        self.toggle.setArrowType(Qt.ArrowType.DownArrow if expanded else Qt.ArrowType.RightArrow)
        self.body.setVisible(expanded)

    @property
    def expanded(self) -> bool:
        return self.toggle.isChecked()


class ServerForm(QScrollArea):
    """The form of one server of one file."""

    edited = Signal(str, object)  # key name, value (UNSET removes the key)
    renamed = Signal(str)  # the new server name
    entryEdited = Signal(str, str, object)  # key name, entry, value or UNSET
    keychainRequested = Signal(str, str, str)  # key name, entry ("" = the key), value
    typing = Signal()  # a field's typed text changed, not yet applied

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWidgetResizable(True)
        self.setAccessibleName("server form")
        self.file: EditedFile | None = None
        self.server: str | None = None
        inner = QWidget()
        column = QVBoxLayout(inner)
        self.title = QLabel("Select a server on the left, or add one.")
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.title.setAccessibleName("form title")
        column.addWidget(self.title)
        name_row = QFormLayout()
        self.name_edit = QLineEdit()
        self.name_edit.setAccessibleName("server name")
        self.name_edit.setToolTip("ASCII letters, digits, '-' and '_' (no dots, no '__')")
        self.name_edit.editingFinished.connect(self._rename)
        name_row.addRow("Name", self.name_edit)
        column.addLayout(name_row)
        self.server_errors = QLabel()
        self.server_errors.setWordWrap(True)
        set_tone(self.server_errors, "error")
        self.server_errors.setAccessibleName("server errors")
        self.server_errors.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.server_errors.hide()
        column.addWidget(self.server_errors)
        self.sections: dict[str, Section] = {}
        self.fields: dict[str, FieldEditor] = {}
        self.labels: dict[str, QLabel] = {}
        for group, specs in schema.by_group():
            section = Section(group)
            self.sections[group] = section
            for spec in specs:
                if spec.type == "table":
                    heading = QLabel(f"<i>{spec.name}: {spec.help}</i>")
                    heading.setWordWrap(True)
                    section.layout_.addRow(heading)
                    continue
                field = MappingEditor(spec) if spec.type == "mapping" else FieldEditor(spec)
                field.edited.connect(lambda value, n=spec.name: self.edited.emit(n, value))
                field.typing.connect(self.typing)
                field.keychainRequested.connect(
                    lambda entry, value, n=spec.name: self.keychainRequested.emit(n, entry, value)
                )
                if isinstance(field, MappingEditor):
                    field.entryEdited.connect(
                        lambda entry, value, n=spec.name: self.entryEdited.emit(n, entry, value)
                    )
                label = QLabel(spec.name)
                label.setToolTip(spec.help)
                label.setBuddy(field.editor)
                self.labels[spec.name] = label
                section.layout_.addRow(label, field)
                self.fields[spec.name] = field
            column.addWidget(section)
        column.addStretch(1)
        self.setWidget(inner)
        self.setEnabled(False)

    def show_server(self, file: EditedFile | None, server: str | None) -> None:
        """Show ``server`` of ``file`` (None: nothing selected); values come from its doc."""
        changed = (file, server) != (self.file, self.server)
        self.file, self.server = file, server
        if file is None or server is None or file.doc is None or not file.doc.has_server(server):
            self.setEnabled(False)
            if file is not None and server is not None and file.doc is None:
                self.title.setText(
                    f"<b>{server}</b> — {file.label}: the file does not parse; "
                    "fix it in its raw tab."
                )
            return
        self.setEnabled(True)
        self.name_edit.setText(server)
        self.title.setText(f"<b>{server}</b> &nbsp;·&nbsp; {file.badge} &nbsp;·&nbsp; {file.path}")
        dialect = file.dialect
        entry = file.doc.get(server) or {}
        kind = "remote" if "url" in entry else "stdio" if "command" in entry else None
        for name, field in self.fields.items():
            spec = field.spec
            label = self.labels[name]
            label.setText(label_text(spec, dialect))
            # Keys of the other transport stay editable, but say they do not apply.
            elsewhere = kind is not None and spec.applies not in ("any", kind)
            label.setEnabled(not elsewhere)
            where = "HTTP servers" if spec.applies == "remote" else "stdio servers"
            label.setToolTip(f"{spec.help} (only {where})" if elsewhere else spec.help)
            field.show_value(file, file.doc.get(server, *spec.path(dialect)))
        if changed:
            for group, section in self.sections.items():
                used = any(
                    f.value not in (None, {}, [])
                    for f in self.fields.values()
                    if f.spec.group == group
                )
                section.set_expanded(group == schema.GROUPS[0] or used)
        self.set_diagnostics(file.diagnostics())

    def refresh(self) -> None:
        self.show_server(self.file, self.server)

    def _rename(self) -> None:
        new = self.name_edit.text().strip()
        if self.server is not None and new and new != self.server:
            self.renamed.emit(new)

    def set_diagnostics(self, diagnostics: Iterable[Diagnostic]) -> None:
        by_field: dict[str, list[str]] = {}
        loose: list[str] = []
        for diag in diagnostics:
            if diag.server != self.server or self.server is None:
                continue
            name = field_for(diag.key)
            if name is None:
                loose.append(str(diag))
            else:
                by_field.setdefault(name, []).append(str(diag))
                self.sections[self.fields[name].spec.group].set_expanded(True)
        for name, field in self.fields.items():
            field.set_errors(by_field.get(name, []))
        self.server_errors.setText("\n".join(loose))
        self.server_errors.setVisible(bool(loose))


def field_for(key: str | None) -> str | None:
    """The form field a diagnostic's key belongs to (``env.TOKEN`` -> ``env``)."""
    if not key:
        return None
    best: str | None = None
    for spec in schema.KEYS:
        if spec.type == "table":
            continue
        if (key == spec.name or key.startswith(spec.name + ".")) and (
            best is None or len(spec.name) > len(best)
        ):
            best = spec.name
    return best
