"""The Overview tab: how the server is reached, what it said about itself, where it is
configured, its last error in full (selectable) and its timings."""

from __future__ import annotations

import time

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QScrollArea, QVBoxLayout, QWidget

from portico.runtime.events import ServerState
from portico.runtime.health import HealthSnapshot
from portico.ui.models.clock import clock
from portico.ui.pages.common import esc
from portico.ui.pages.health_view import HealthView
from portico.ui.palette import set_tone
from portico.ui.runtime_thread.snapshots import ServerDetails
from portico.ui.text import set_plain
from portico.ui.tray_state import status_text


def _ago(stamp: float | None, now: float) -> str:
    if stamp is None:
        return "never"
    seconds = max(0, int(now - stamp))
    at = time.strftime("%H:%M:%S", time.localtime(stamp))
    if seconds < 60:
        return f"{at} ({seconds} s ago)"
    if seconds < 3600:
        return f"{at} ({seconds // 60} min ago)"
    return f"{at} ({seconds // 3600} h ago)"


class OverviewPage(QScrollArea):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWidgetResizable(True)
        self.setAccessibleName("server overview")
        body = QWidget()
        column = QVBoxLayout(body)
        column.setContentsMargins(12, 12, 12, 12)
        self.table = QLabel("Select a server on the left.")
        self.table.setTextFormat(Qt.TextFormat.RichText)
        self.table.setWordWrap(True)
        self.table.setAccessibleName("server facts")
        self.table.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
            | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        column.addWidget(self.table)
        self.error_title = QLabel("<b>Last error</b>")
        column.addWidget(self.error_title)
        self.error = QLabel()
        self.error.setTextFormat(Qt.TextFormat.PlainText)
        self.error.setWordWrap(True)
        self.error.setAccessibleName("last error")
        set_tone(self.error, "error")
        self.error.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
            | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        self.error.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        column.addWidget(self.error)
        self.health = HealthView()
        self.health.hide()
        column.addWidget(self.health)
        column.addStretch(1)
        self.setWidget(body)
        self.details: ServerDetails | None = None
        self._show_error(None)

    def _show_error(self, text: str | None) -> None:
        set_plain(self.error, text or "", multiline=True)
        self.error.setVisible(bool(text))
        self.error_title.setVisible(bool(text))

    def show_state(self, state: ServerState | None, scope: str | None) -> None:
        """Quick facts from the list row (before or without the runtime's details)."""
        if state is None:
            self.details = None
            self.table.setText("Select a server on the left.")
            self._show_error(None)
            self.health.show_health(None)
            return
        if self.details is not None and self.details.name == state.name:
            return  # the full details follow from the controller
        rows = [("Server", state.name), ("Status", status_text(state, clock().now()))]
        if scope:
            rows.append(("Scope", scope))
        self.table.setText(_table(rows))
        self._show_error(state.error)

    def show_details(self, details: ServerDetails, state: ServerState | None) -> None:
        self.details = details
        now = clock().now()  # the list's reading too: both show the same second
        status = status_text(state, now) if state is not None else details.status
        rows = [
            ("Server", details.name),
            ("Status", status),
            ("Transport", details.transport),
            ("URL" if details.transport != "stdio" else "Command", details.target),
            ("Configured in", f"{details.source} ({details.scope})"),
            *((("Sandbox", "\n".join(details.sandbox)),) if details.sandbox else ()),
            ("Protocol version", details.protocol_version or "—"),
        ]
        if details.server_name or details.server_version:
            info = " ".join(x for x in (details.server_name, details.server_version) if x)
            rows.append(("Server info", info + (" (cached)" if details.from_cache else "")))
        if state is not None:
            rows.append(("Tools", str(state.tool_count)))
        if details.connect_seconds is not None:
            rows.append(("Connect time", f"{details.connect_seconds * 1000:.0f} ms"))
        rows.append(("Connected", _ago(details.connected_at, now)))
        rows.append(("Last call", _ago(details.last_call_at, now)))
        if details.instructions:
            rows.append(("Instructions", details.instructions))
        self.table.setText(_table(rows))
        error = state.error if state is not None else details.error
        self._show_error(error)

    def show_health(self, health: HealthSnapshot | None) -> None:
        self.health.show_health(health)


def _table(rows: list[tuple[str, str]]) -> str:
    html = "".join(
        f"<tr><td style='padding-right:14px; vertical-align:top'><b>{esc(k)}</b></td>"
        f"<td style='white-space:pre-wrap'>{esc(v)}</td></tr>"
        for k, v in rows
    )
    return f"<table cellspacing='3'>{html}</table>"
