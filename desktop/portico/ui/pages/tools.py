"""The Tools tab: the server's tools (filtered-out ones greyed with the reason), the
selected tool's description, annotations and input schema in words, and a "Try it"
form generated from the schema that calls the tool through the approval policy."""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QScrollArea,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from portico.ui.pages.common import PageBackend, browser, esc, status_label
from portico.ui.pages.result_view import ResultView
from portico.ui.palette import Tone, tone, tone_color
from portico.ui.runtime_thread.snapshots import ToolInfo
from portico.ui.schema_form import SchemaForm, schema_kind

COLUMNS = ("Name", "Description", "Annotations")


def type_text(prop: Mapping[str, Any]) -> str:
    """A property's type in words: "string", "array of integer", "one of: a, b"."""
    if isinstance(prop.get("enum"), list):
        return "one of: " + ", ".join(str(v) for v in prop["enum"])
    kind = schema_kind(prop) or "any"
    if kind == "array":
        items = prop.get("items")
        if isinstance(items, Mapping):
            return f"array of {type_text(items)}"
    nullable = prop.get("type") == ["null"] or any(
        isinstance(o, Mapping) and o.get("type") == "null"
        for o in (prop.get("anyOf") or prop.get("oneOf") or [])
    )
    if isinstance(prop.get("type"), list) and "null" in prop["type"]:
        nullable = True
    fmt = f" ({prop['format']})" if prop.get("format") else ""
    return f"{kind}{fmt}" + (" or null" if nullable else "")


def schema_html(schema: Mapping[str, Any]) -> str:
    """The input schema as a readable table of parameters."""
    props = schema.get("properties") or {}
    if not isinstance(props, Mapping) or not props:
        return f"<p style='color:{tone('muted')}'>No parameters.</p>"
    required = set(schema.get("required") or ())
    rows = []
    for name, prop in props.items():
        if not isinstance(prop, Mapping):
            continue
        notes = []
        if prop.get("description"):
            notes.append(esc(prop["description"]))
        if "default" in prop and prop["default"] is not None:
            notes.append(f"default: <code>{esc(prop['default'])}</code>")
        for key, word in (("minimum", "min"), ("maximum", "max")):
            if key in prop:
                notes.append(f"{word} {esc(prop[key])}")
        mark = f"<b style='color:{tone('error')}'>required</b>" if name in required else "optional"
        rows.append(
            f"<tr><td><code><b>{esc(name)}</b></code></td><td>{esc(type_text(prop))}</td>"
            f"<td>{mark}</td><td>{'; '.join(notes)}</td></tr>"
        )
    head = (
        "<tr><th align=left>Parameter</th><th align=left>Type</th><th></th>"
        "<th align=left>Notes</th></tr>"
    )
    return f"<table cellspacing='4'>{head}{''.join(rows)}</table>"


def tool_html(tool: ToolInfo) -> str:
    parts = [f"<h3>{esc(tool.title or tool.name)}</h3>"]
    if tool.title and tool.title != tool.name:
        parts.append(f"<p><code>{esc(tool.name)}</code></p>")
    if tool.qualified:
        parts.append(
            f"<p style='color:{tone('muted')}'>Called by models as "
            f"<code>{esc(tool.qualified)}</code></p>"
        )
    if tool.filtered_reason:
        parts.append(
            f"<p style='color:{tone('warning')}'><b>Filtered out:</b> "
            f"{esc(tool.filtered_reason)}</p>"
        )
    if tool.badges:
        parts.append("<p>" + " ".join(_badge(b) for b in tool.badges) + "</p>")
    if tool.description:
        text = inspect.cleandoc(tool.description)
        parts.append(f"<p style='white-space:pre-wrap'>{esc(text)}</p>")
    parts.append("<p><b>Parameters</b></p>")
    parts.append(schema_html(tool.input_schema))
    return "".join(parts)


_BADGE_TONES: dict[str, Tone] = {"destructive": "error", "read-only": "ok", "open-world": "info"}


def _badge(label: str) -> str:
    color = tone(_BADGE_TONES.get(label, "muted"))
    return f"<span style='color:{color}; border:1px solid {color}'>&nbsp;{esc(label)}&nbsp;</span>"


class ToolsPage(QWidget):
    def __init__(self, backend: PageBackend, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.backend = backend
        self.server: str | None = None
        self.tools: list[ToolInfo] = []
        self.form: SchemaForm | None = None
        self.setAccessibleName("tools")

        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.setAccessibleName("tool list")
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        self.table.setWordWrap(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        self.table.currentCellChanged.connect(lambda *_: self._select_current())
        self.empty = QLabel("Tools appear here once the server is running.")
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)

        self.details = browser("tool details")
        self.try_box = QGroupBox("Try it")
        self.try_box.setAccessibleName("try it")
        self.try_layout = QVBoxLayout(self.try_box)
        self.form_area = QScrollArea()
        self.form_area.setWidgetResizable(True)
        self.form_area.setMinimumHeight(60)
        self.try_layout.addWidget(self.form_area)
        row = QHBoxLayout()
        self.call_button = QPushButton("&Call")
        self.call_button.setAccessibleName("Call tool")
        self.call_button.setToolTip("Call the tool with these arguments (Ctrl+Enter)")
        self.call_button.setShortcut("Ctrl+Return")
        self.call_button.clicked.connect(self.call_selected)
        row.addWidget(self.call_button)
        self.call_status = status_label("call status")
        row.addWidget(self.call_status, 1)
        self.try_layout.addLayout(row)
        self.result_view = ResultView("tool result")
        self.try_layout.addWidget(self.result_view, 1)

        right = QSplitter(Qt.Orientation.Vertical)
        right.addWidget(self.details)
        right.addWidget(self.try_box)
        right.setSizes([200, 320])
        left = QWidget()
        left_column = QVBoxLayout(left)
        left_column.setContentsMargins(0, 0, 0, 0)
        left_column.addWidget(self.empty)
        left_column.addWidget(self.table, 1)
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(left)
        self.splitter.addWidget(right)
        self.splitter.setSizes([380, 420])
        column = QVBoxLayout(self)
        column.setContentsMargins(4, 4, 4, 4)
        column.addWidget(self.splitter)
        self._set_tool(None)

    # --- content -------------------------------------------------------------------------

    def set_tools(self, server: str | None, tools: list[ToolInfo]) -> None:
        keep = self.selected_tool()
        same_server = server == self.server
        self.server = server
        self.tools = list(tools)
        self.table.blockSignals(True)
        self.table.setRowCount(len(tools))
        grey = QBrush(self.palette().color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text))
        for row, tool in enumerate(tools):
            first_line = (
                tool.description.strip().splitlines()[0] if tool.description.strip() else ""
            )
            note = ", ".join(tool.badges)
            if tool.filtered_reason:
                first_line = f"Filtered out: {tool.filtered_reason}"
            elif tool.utility:
                note = ", ".join(["Portico utility", *tool.badges])
            cells = (tool.name, first_line, note)
            for col, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setData(Qt.ItemDataRole.UserRole, row)
                if tool.filtered_reason:
                    item.setForeground(grey)
                    item.setToolTip(f"Filtered out: {tool.filtered_reason}")
                    item.setData(Qt.ItemDataRole.AccessibleTextRole, f"{text} (filtered out)")
                elif col == 1:
                    item.setToolTip(tool.description)
                if col == 2 and "destructive" in tool.badges:
                    item.setForeground(QBrush(tone_color("error")))
                self.table.setItem(row, col, item)
        self.table.blockSignals(False)
        self.empty.setVisible(not tools)
        self.table.setVisible(bool(tools))
        if not tools:
            self.empty.setText(
                "Tools appear here once the server is running." if server else "No server selected."
            )
        target = 0 if tools else -1
        if same_server and keep is not None:
            for row, tool in enumerate(tools):
                if tool.name == keep.name:
                    target = row
        if target >= 0:
            if self.table.currentRow() != target:
                self.table.setCurrentCell(target, 0)
            elif not same_server or keep is None or keep != tools[target]:
                self._select_current()
        else:
            self._set_tool(None)

    def row_of(self, name: str) -> int | None:
        for row, tool in enumerate(self.tools):
            if tool.name == name:
                return row
        return None

    def select_tool(self, name: str) -> None:
        row = self.row_of(name)
        if row is None:
            raise KeyError(f"no tool named {name!r} on this page")
        self.table.setCurrentCell(row, 0)

    def selected_tool(self) -> ToolInfo | None:
        row = self.table.currentRow()
        return self.tools[row] if 0 <= row < len(self.tools) else None

    def _select_current(self) -> None:
        self._set_tool(self.selected_tool())

    def _set_tool(self, tool: ToolInfo | None) -> None:
        self.result_view.clear()
        self.call_status.clear()
        if tool is None:
            self.details.setHtml(
                f"<p style='color:{tone('muted')}'>Select a tool to see its parameters.</p>"
            )
            self.form = None
            self.form_area.setWidget(QWidget())
            self.try_box.setEnabled(False)
            return
        self.details.setHtml(tool_html(tool))
        self.form = SchemaForm(tool.input_schema)
        self.form.setAccessibleName(f"arguments for {tool.name}")
        self.form_area.setWidget(self.form)
        self.form_area.setVisible(bool(self.form.fields))
        callable_ = not tool.filtered_reason and bool(tool.qualified)
        self.try_box.setEnabled(callable_)
        if not callable_:
            self.call_status.setText("Filtered out tools cannot be called.")
        elif not self.form.fields:
            self.call_status.setText("This tool takes no arguments.")

    # --- calling -------------------------------------------------------------------------

    def call_selected(self) -> None:
        tool = self.selected_tool()
        if tool is None or self.form is None or self.server is None:
            return
        problems = self.form.problems()
        if problems:
            self.result_view.show_message("\n".join(problems), error=True)
            return
        arguments = self.form.content()
        self.call_button.setEnabled(False)
        self.call_status.setText(f"Calling {tool.name}… (you may be asked to approve it)")
        self.result_view.clear()
        self.backend.spawn(self._call(self.server, tool, arguments))

    async def _call(self, server: str, tool: ToolInfo, arguments: dict[str, Any]) -> None:
        try:
            result = await self.backend.run("call_tool", server, tool.qualified, arguments)
        except Exception as exc:
            if self.server == server:
                self.call_status.setText("The call failed.")
                self.result_view.show_message(f"{type(exc).__name__}: {exc}", error=True)
            return
        finally:
            self.call_button.setEnabled(True)
        if self.server != server or self.selected_tool() is None:
            return
        if self.selected_tool().name != tool.name:  # type: ignore[union-attr]
            return
        self.call_status.setText(
            f"{tool.name} returned an error." if result.is_error else f"{tool.name} returned."
        )
        self.result_view.show_result(result)
