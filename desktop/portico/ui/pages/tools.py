"""The Tools tab: the server's tools (filtered-out ones greyed with the reason), the
selected tool's description, annotations and input schema in words, and a "Try it"
form generated from the schema that calls the tool through the approval policy."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QIcon, QPalette
from PySide6.QtWidgets import (
    QApplication,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from portico.ui.icons import announced_icon
from portico.ui.models.page_items import (
    Column,
    ItemsModel,
    current_row,
    items_view,
    set_current_row,
)
from portico.ui.pages.common import PageBackend, browser, esc, status_label
from portico.ui.pages.result_view import ResultView
from portico.ui.pages.task_panel import TaskPanel
from portico.ui.palette import Tone, tone, tone_color
from portico.ui.runtime_thread.page_service import CallOutcome
from portico.ui.runtime_thread.snapshots import ToolInfo
from portico.ui.schema_form import FieldError, SchemaForm, schema_kind
from portico.ui.shortcuts import WHERE
from portico.ui.text import set_plain
from portico.ui.views.view_pane import ViewPane

if TYPE_CHECKING:
    from portico.runtime.results import ToolResult


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


def _summary(tool: ToolInfo) -> str:
    if tool.filtered_reason:
        return f"Filtered out: {tool.filtered_reason}"
    text = tool.description.strip()
    return text.splitlines()[0] if text else ""


def _notes(tool: ToolInfo) -> str:
    if tool.utility and not tool.filtered_reason:
        return ", ".join(["Portico utility", *tool.badges])
    return ", ".join(tool.badges)


def _icon(tool: ToolInfo) -> QIcon | None:
    return announced_icon(tool.icon)


def _grey(tool: ToolInfo) -> QBrush | None:
    if not tool.filtered_reason:
        return None
    palette = QApplication.palette()
    return QBrush(palette.color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text))


def _notes_brush(tool: ToolInfo) -> QBrush | None:
    if tool.filtered_reason:
        return _grey(tool)
    return QBrush(tone_color("error")) if "destructive" in tool.badges else None


def _tip(tool: ToolInfo) -> str | None:
    return f"Filtered out: {tool.filtered_reason}" if tool.filtered_reason else None


def _accessible(tool: ToolInfo, text: str) -> str:
    return f"{text} (filtered out)" if tool.filtered_reason else text


TOOL_COLUMNS: tuple[Column[ToolInfo], ...] = (
    Column("Name", lambda t: t.name, _tip, _grey, _accessible, decoration=_icon),
    Column(
        "Description",
        _summary,
        lambda t: _tip(t) or t.description,
        _grey,
        _accessible,
        stretch=True,
    ),
    Column("Annotations", _notes, _tip, _notes_brush, _accessible),
)


def tool_counts(tools: list[ToolInfo]) -> str:
    """What the rows are, in the words of the server list's count ("16 tools"): the
    server's tools models may use, then Portico's utility tools, then those filtered out."""
    utilities = sum(1 for t in tools if t.utility and not t.filtered_reason)
    filtered = sum(1 for t in tools if t.filtered_reason)
    offered = len(tools) - utilities - filtered
    parts = ["1 tool" if offered == 1 else f"{offered} tools"]
    if utilities:
        parts.append(f"{utilities} Portico utility tool{'s' if utilities != 1 else ''}")
    if filtered:
        parts.append(f"{filtered} filtered out")
    return " + ".join(parts)


class ToolsPage(QWidget):
    def __init__(self, backend: PageBackend, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.backend = backend
        self.server: str | None = None
        self.form: SchemaForm | None = None
        self.running: asyncio.Task[None] | None = None  # the call in flight
        self._running_tool: tuple[str, str] | None = None  # (server, tool) it calls
        self.setAccessibleName("tools")

        self.model: ItemsModel[ToolInfo] = ItemsModel(TOOL_COLUMNS, self)
        self.table = items_view(self.model, "tool list")
        self.table.selectionModel().currentRowChanged.connect(lambda *_: self._select_current())
        self.empty = QLabel("Tools appear here once the server is running.")
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.counts = status_label("tool counts")
        self.counts.hide()

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
        self.call_button.setToolTip("Call the tool with these arguments (Enter, Ctrl+Enter)")
        self.call_button.setShortcut("Ctrl+Return")
        self.call_button.setProperty(WHERE, "Servers: Try it")
        self.call_button.clicked.connect(self.call_selected)
        row.addWidget(self.call_button)
        self.cancel_button = QPushButton("Cancel call")
        self.cancel_button.setAccessibleName("Cancel call")
        self.cancel_button.clicked.connect(self.cancel_call)
        self.cancel_button.hide()
        row.addWidget(self.cancel_button)
        self.progress = QProgressBar()
        self.progress.setAccessibleName("call progress")
        self.progress.setMaximumWidth(180)
        self.progress.hide()
        row.addWidget(self.progress)
        self.call_status = status_label("call status")
        row.addWidget(self.call_status, 1)
        self.try_layout.addLayout(row)
        self.task_panel = TaskPanel(backend, self._task_result, self._task_failed)
        self.try_layout.addWidget(self.task_panel)
        self.result_view = ResultView("tool result")
        self.try_layout.addWidget(self.result_view, 1)
        self.view_pane = ViewPane(backend)  # MCP Apps: the result's view, when it has one
        self.try_layout.addWidget(self.view_pane, 2)
        self._task_text: str | None = None  # the last task status a call reported

        right = QSplitter(Qt.Orientation.Vertical)
        right.addWidget(self.details)
        right.addWidget(self.try_box)
        right.setSizes([200, 320])
        left = QWidget()
        left_column = QVBoxLayout(left)
        left_column.setContentsMargins(0, 0, 0, 0)
        left_column.addWidget(self.empty)
        left_column.addWidget(self.counts)
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

    @property
    def tools(self) -> list[ToolInfo]:
        return self.model.items

    def set_tools(self, server: str | None, tools: list[ToolInfo]) -> None:
        keep = self.selected_tool()
        same_server = server == self.server
        self.server = server
        self.task_panel.show_server(server)
        blocker = self.table.selectionModel().blockSignals(True)
        self.model.set_items(tools)
        self.table.selectionModel().blockSignals(blocker)
        self.empty.setVisible(not tools)
        self.table.setVisible(bool(tools))
        self.counts.setText(tool_counts(tools))
        self.counts.setVisible(bool(tools))
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
            set_current_row(self.table, target)
            if not same_server or keep is None or keep != tools[target]:
                self._select_current()
        else:
            self._set_tool(None)

    def row_of(self, name: str) -> int | None:
        for row, tool in enumerate(self.model.items):
            if tool.name == name:
                return row
        return None

    def cell(self, row: int, column: int) -> str:
        """The text shown in one cell (for tests and accessibility checks)."""
        return self.model.text(row, column)

    def select_tool(self, name: str) -> None:
        row = self.row_of(name)
        if row is None:
            raise KeyError(f"no tool named {name!r} on this page")
        set_current_row(self.table, row)

    def selected_tool(self) -> ToolInfo | None:
        return self.model.item(current_row(self.table))

    def _select_current(self) -> None:
        self._set_tool(self.selected_tool())

    def _set_tool(self, tool: ToolInfo | None) -> None:
        self.result_view.clear()
        self.view_pane.close_view()
        self.call_status.clear()
        if tool is None:
            self.details.setHtml(
                f"<p style='color:{tone('muted')}'>Select a tool to see its parameters.</p>"
            )
            self.form = None
            self.form_area.setWidget(QWidget())
            self.try_box.setEnabled(False)
            self._show_running()
            return
        self.details.setHtml(tool_html(tool))
        self.form = SchemaForm(tool.input_schema)
        self.form.setAccessibleName(f"arguments for {tool.name}")
        self.form.submitted.connect(self.call_selected)
        self.form_area.setWidget(self.form)
        self.form_area.setVisible(bool(self.form.fields))
        callable_ = not tool.filtered_reason and bool(tool.qualified)
        self.try_box.setEnabled(callable_)
        if not callable_:
            set_plain(self.call_status, "Filtered out tools cannot be called.")
        elif not self.form.fields:
            set_plain(self.call_status, "This tool takes no arguments.")
        self._show_running()

    def _show_running(self) -> None:
        """Call is greyed only while this very tool is being called; Cancel shows then."""
        tool = self.selected_tool()
        busy = (
            self.running is not None
            and tool is not None
            and self._running_tool == (self.server, tool.name)
        )
        self.call_button.setEnabled(not busy)
        self.cancel_button.setVisible(busy)
        self.progress.setVisible(busy)

    # --- calling -------------------------------------------------------------------------

    async def _approval_hint(self, qualified: str, arguments: dict[str, Any], calling: str) -> None:
        asks = await self.backend.call(lambda pages: pages.call_asks(qualified, arguments))
        if asks and self.call_status.text() == calling:  # the call has not moved on yet
            set_plain(self.call_status, f"{calling} (you may be asked to approve it)")

    def call_selected(self) -> None:
        tool = self.selected_tool()
        if tool is None or self.form is None or self.server is None:
            return
        if not self.call_button.isEnabled() or not self.try_box.isEnabled():
            return
        problems = self.form.problems()
        if problems:
            self.result_view.show_message("\n".join(problems), error=True)
            return
        try:
            arguments = self.form.content()
        except FieldError as exc:
            self.result_view.show_message(str(exc), error=True)
            return
        if self.running is not None:
            self.running.cancel()  # one call at a time from this tab
        calling = f"Calling {tool.name}…"
        set_plain(self.call_status, calling)
        if tool.asks_approval:  # unless an earlier answer (Allow for Session) covers it
            self.backend.ops.spawn(
                self._approval_hint(tool.qualified, arguments, calling),
                f"Ask about {tool.name}",
                server=self.server,
            )
        self.result_view.clear()
        self.view_pane.close_view()
        self.progress.setRange(0, 0)  # busy until the server reports progress
        server = self.server
        loop = asyncio.get_running_loop()

        def progress(done: float, total: float | None, message: str | None) -> None:
            loop.call_soon_threadsafe(self._progress, server, tool.name, done, total, message)

        op = self.backend.op(
            lambda pages: pages.call_tool(server, tool.qualified, arguments, progress),
            f"Call {tool.name}",
            server=server,
        )
        task = (
            op.success(lambda outcome: self._returned(server, tool, outcome, arguments))
            .failure(lambda exc: self._failed(server, tool, exc))
            .finally_(lambda: self._ended(task))
            .run()
        )
        self.running = task
        self._running_tool = (server, tool.name)
        self._show_running()

    def cancel_call(self) -> None:
        if self.running is not None:
            self.running.cancel()
            set_plain(self.call_status, "Cancelled: the server was told to stop the call.")

    def _is_shown(self, server: str, tool: ToolInfo) -> bool:
        selected = self.selected_tool()
        return self.server == server and selected is not None and selected.name == tool.name

    def _progress(
        self, server: str, name: str, done: float, total: float | None, message: str | None
    ) -> None:
        if self._running_tool != (server, name):
            return
        if total:
            self.progress.setRange(0, 1000)
            self.progress.setValue(int(1000 * min(done / total, 1.0)))
            self.progress.setFormat(f"{done:g} / {total:g}")
        else:
            self.progress.setRange(0, 0)
        if message:
            set_plain(self.call_status, message)
        if message and message.startswith("task ") and message != self._task_text:
            self._task_text = message  # the call became a task: list it (it survives a restart)
            self.task_panel.refresh()

    def _ended(self, task: asyncio.Task[None]) -> None:
        if self.running is task:
            self.running = None
            self._running_tool = None
            if self._task_text is not None:
                self._task_text = None
                self.task_panel.refresh()
        self._show_running()

    def _task_result(self, tool: str, result: ToolResult) -> None:
        set_plain(
            self.call_status, f"{tool} (task) returned" + (" an error." if result.is_error else ".")
        )
        self.result_view.show_result(result)

    def _task_failed(self, text: str) -> None:
        self.result_view.show_message(text, error=True)

    def _failed(self, server: str, tool: ToolInfo, exc: Exception) -> None:
        if self._is_shown(server, tool):
            set_plain(self.call_status, "The call failed.")
            self.result_view.show_message(f"{type(exc).__name__}: {exc}", error=True)

    def _returned(
        self, server: str, tool: ToolInfo, outcome: CallOutcome, arguments: dict[str, Any]
    ) -> None:
        if not self._is_shown(server, tool):
            return
        if outcome.refusal is not None:
            set_plain(self.call_status, "Not run.")
            self.result_view.show_message(outcome.refusal, error=True)
            return
        result = outcome.result
        set_plain(
            self.call_status,
            f"{tool.name} returned an error." if result.is_error else f"{tool.name} returned.",
        )
        self.result_view.show_result(result)
        if tool.view is not None and not result.is_error:
            self.view_pane.open_view(server, tool.qualified, arguments, result)
