"""A form generated from a JSON schema (object with properties): one widget per property.

Shared by the elicitation dialog and the Tools tab's "Try it" form. Strings, numbers,
integers, booleans and enums get their natural widget (enums a combo box, arrays of enum
values a checkable list); other arrays, objects and anything else structured get a
one-line JSON field. Required properties are
marked with " *"; defaults are filled in; optional numbers start unset ("—").
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QLineEdit,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from portico.ui.text import plain, plain_label, tip

_INT_LIMIT = 2_000_000_000  # QSpinBox holds a C int
_FLOAT_LIMIT = 1e15
_JSON_KINDS = ("array", "object")


class FieldError(ValueError):
    """A field's text is not a value of its type (e.g. malformed JSON)."""


def schema_kind(prop: Mapping[str, Any]) -> str | None:
    """The property's type; for ``anyOf``/``type`` lists the first one that is not null."""
    kind = prop.get("type")
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"]
        return kinds[0] if kinds else None
    if kind is None:
        for key in ("anyOf", "oneOf"):
            options = prop.get(key)
            if isinstance(options, list):
                for option in options:
                    if isinstance(option, Mapping) and option.get("type") not in (None, "null"):
                        return schema_kind(option)
    return kind if isinstance(kind, str) else None


class NumberSpin(QDoubleSpinBox):
    """A number field that shows 100, 0.5 or 1e-06, never "100.000000"."""

    def textFromValue(self, value: float) -> str:
        return f"{value:.{self.decimals()}f}".rstrip("0").rstrip(".") or "0"


class ChoiceList(QWidget):
    """A multi-select: one check box per choice, in the schema's order."""

    def __init__(self, choices: list[tuple[Any, str]], chosen: list[Any]) -> None:
        super().__init__()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        self.boxes: list[tuple[Any, QCheckBox]] = []
        for value, title in choices:
            box = QCheckBox(plain(title))
            box.setChecked(value in chosen)
            layout.addWidget(box, 0, Qt.AlignmentFlag.AlignLeft)
            self.boxes.append((value, box))

    def box(self, title: str) -> QCheckBox:
        return next(b for _, b in self.boxes if b.text() == plain(title))

    def chosen(self) -> list[Any]:
        return [value for value, box in self.boxes if box.isChecked()]


class Field:
    """One schema property as a widget, with a way to read its value back."""

    def __init__(self, name: str, prop: Mapping[str, Any], required: bool, default: Any) -> None:
        self.name = name
        self.required = required
        self.unset_allowed = False
        self.kind = schema_kind(prop)
        options = _enum_options(prop)
        choices = _multi_options(prop)
        self.widget: QWidget
        self.min_items = _count(prop.get("minItems"))
        self.max_items = _count(prop.get("maxItems"))
        if choices is not None:
            chosen = default if isinstance(default, list) else []
            self.widget = ChoiceList(choices, chosen)
            self.kind = "multi"
        elif options is not None:
            combo = QComboBox()
            if not required and default is None:
                combo.addItem("—", None)
            for value, title in options:
                combo.addItem(plain(title), value)
            if default is not None:
                index = combo.findData(default)
                if index >= 0:
                    combo.setCurrentIndex(index)
            self.widget = combo
            self.kind = "enum"
        elif self.kind == "boolean":
            box = QCheckBox()
            box.setChecked(bool(default))
            self.widget = box
        elif self.kind == "integer":
            spin = QSpinBox()
            lo = int(_number(prop.get("minimum"), -_INT_LIMIT, _INT_LIMIT))
            hi = int(_number(prop.get("maximum"), _INT_LIMIT, _INT_LIMIT))
            self._setup_spin(spin, lo, hi, default, required)
            self.widget = spin
        elif self.kind == "number":
            dspin = NumberSpin()
            dspin.setDecimals(6)
            lo_f = float(_number(prop.get("minimum"), -_FLOAT_LIMIT, _FLOAT_LIMIT))
            hi_f = float(_number(prop.get("maximum"), _FLOAT_LIMIT, _FLOAT_LIMIT))
            self._setup_spin(dspin, lo_f, hi_f, default, required)
            self.widget = dspin
        elif self.kind in _JSON_KINDS:
            edit = QLineEdit()
            if default is not None:
                edit.setText(json.dumps(default))
            edit.setPlaceholderText(
                "JSON, e.g. [1, 2]" if self.kind == "array" else 'JSON, e.g. {"a": 1}'
            )
            self.widget = edit
        else:
            edit = QLineEdit()
            if default is not None:
                edit.setText(str(default))
            if prop.get("format"):
                edit.setPlaceholderText(str(prop["format"]))
            self.widget = edit
        # title and description are the server's: shown through plain(), never as markup
        title = plain(prop.get("title") or name)
        self.widget.setAccessibleName(title)
        if prop.get("description"):
            self.widget.setToolTip(tip(prop["description"]))
            self.widget.setAccessibleDescription(plain(prop["description"], multiline=True))
        self.label = f"{title} *" if required else title

    def _setup_spin(
        self, spin: QSpinBox | QDoubleSpinBox, lo: Any, hi: Any, default: Any, required: bool
    ) -> None:
        if not required and default is None:
            # one below the minimum shows as "—": not given
            self.unset_allowed = True
            spin.setRange(lo - 1, hi)
            spin.setSpecialValueText("—")
            spin.setValue(lo - 1)
        else:
            spin.setRange(lo, hi)
            if default is not None:
                # a default of the wrong type leaves the minimum; the person fixes it
                with contextlib.suppress(TypeError, ValueError, OverflowError):
                    spin.setValue(default)

    def value(self) -> tuple[bool, Any]:
        """(present, value). Raises FieldError when a JSON field does not parse."""
        w = self.widget
        if isinstance(w, ChoiceList):
            picked = w.chosen()
            return bool(picked) or self.required, picked
        if isinstance(w, QComboBox):
            data = w.currentData()
            return data is not None, data
        if isinstance(w, QCheckBox):
            return True, w.isChecked()
        if isinstance(w, QSpinBox | QDoubleSpinBox):
            if self.unset_allowed and w.value() == w.minimum():
                return False, None
            return True, w.value()
        assert isinstance(w, QLineEdit)
        text = w.text()
        if self.kind in _JSON_KINDS:
            if not text.strip():
                return False, None
            try:
                return True, json.loads(text)
            except json.JSONDecodeError as exc:
                raise FieldError(f"{self.label.rstrip(' *')}: not valid JSON ({exc.msg})") from exc
        return bool(text) or self.required, text


class SchemaForm(QWidget):
    """The form for an object schema's ``properties`` (non-mapping properties are skipped).
    Enter in a text or number field emits ``submitted``."""

    submitted = Signal()

    def __init__(
        self,
        schema: Mapping[str, Any],
        defaults: Mapping[str, Any] | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.form = QFormLayout(self)
        self.form.setContentsMargins(0, 0, 0, 0)
        self.fields: dict[str, Field] = {}
        props = schema.get("properties") or {}
        required = set(schema.get("required") or ())
        defaults = defaults or {}
        if isinstance(props, Mapping):
            for name, prop in props.items():
                if not isinstance(prop, Mapping):
                    continue
                default = defaults.get(name, prop.get("default"))
                field = Field(name, prop, name in required, default)
                self.fields[name] = field
                self.form.addRow(plain_label(field.label + ":", wrap=False), field.widget)
                line = field.widget
                if isinstance(line, QSpinBox | QDoubleSpinBox):
                    line = line.lineEdit()
                if isinstance(line, QLineEdit):
                    line.returnPressed.connect(self.submitted)
        self.has_required = any(f.required for f in self.fields.values())

    def content(self) -> dict[str, Any]:
        """The values given (raises FieldError for a malformed JSON field)."""
        out: dict[str, Any] = {}
        for name, field in self.fields.items():
            present, value = field.value()
            if present:
                out[name] = value
        return out

    def missing(self) -> list[str]:
        out = []
        for f in self.fields.values():
            if not f.required:
                continue
            try:
                present, value = f.value()
            except FieldError:
                continue  # reported by problems()
            if not present or value in ("", None):
                out.append(f.label.rstrip(" *"))
        return out

    def problems(self) -> list[str]:
        """Everything that stops a submit: missing required fields, then bad JSON."""
        out = []
        missing = self.missing()
        if missing:
            out.append("Please fill in: " + ", ".join(missing))
        for f in self.fields.values():
            try:
                present, value = f.value()
            except FieldError as exc:
                out.append(str(exc))
                continue
            if f.kind == "multi" and present:
                out.extend(_count_problem(f, len(value)))
        return out


def _number(value: Any, fallback: float, limit: float) -> float:
    """A schema bound clamped to what a spin box holds (one below -limit is the unset mark)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return max(-limit + 1, min(limit, value))
    return fallback


def _enum_options(prop: Mapping[str, Any]) -> list[tuple[Any, str]] | None:
    if isinstance(prop.get("enum"), list):
        names = prop.get("enumNames")
        values = prop["enum"]
        if isinstance(names, list) and len(names) == len(values):
            return [(v, str(n)) for v, n in zip(values, names, strict=True)]
        return [(v, str(v)) for v in values]
    for key in ("oneOf", "anyOf"):
        if isinstance(prop.get(key), list) and all(
            isinstance(o, Mapping) and "const" in o for o in prop[key]
        ):
            return [(o["const"], str(o.get("title", o["const"]))) for o in prop[key]]
    return None


def _multi_options(prop: Mapping[str, Any]) -> list[tuple[Any, str]] | None:
    """The choices of a multi-select: an array whose ``items`` are an enum (``enum`` or
    ``anyOf``/``oneOf`` of ``const``), as the MCP elicitation schema defines them."""
    if schema_kind(prop) != "array":
        return None
    items = prop.get("items")
    if not isinstance(items, Mapping):
        return None
    return _enum_options(items)


def _count(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None


def _count_problem(field: Field, n: int) -> list[str]:
    name = field.label.rstrip(" *")
    if field.min_items is not None and n < field.min_items:
        return [f"{name}: choose at least {field.min_items}"]
    if field.max_items is not None and n > field.max_items:
        return [f"{name}: choose at most {field.max_items}"]
    return []
