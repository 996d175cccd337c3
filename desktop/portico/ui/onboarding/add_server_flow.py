"""Add a server without the config editor: a preset, a server's URL, or a command.

``submitted`` carries ``[(name, neutral fields)]`` and the secrets to store
(``{keyring name: value}``); the onboarding controller writes them and then reports the
server's status here (``show_state``) until it runs, so the dialog ends in a working
server (or says in plain words why not).
"""

from __future__ import annotations

import shlex
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from portico.config.document import valid_server_name
from portico.config.presets import PRESET_INFO, preset_fields
from portico.runtime.events import ServerState, Status
from portico.ui.palette import set_tone
from portico.ui.preset_list import preset_list
from portico.ui.tray_state import status_text

PRESET, URL, COMMAND = "Preset", "URL", "Command"


def guess_name(text: str) -> str:
    """A server name from a URL host or a command's package ("server-everything")."""
    import re
    from urllib.parse import urlparse

    text = text.strip()
    if "://" in text:
        host = urlparse(text).hostname or "server"
        parts = [p for p in host.split(".") if p not in ("www", "mcp", "api", "com", "io", "org")]
        base = parts[0] if parts else host.split(".")[0]
    else:
        try:
            split = shlex.split(text)
        except ValueError:  # still typing: an open quote
            split = text.replace('"', " ").replace("'", " ").split()
        words = [w for w in split if not w.startswith("-") and not w.isdigit()]
        base = words[-1] if words else "server"
        base = base.rsplit("/", 1)[-1].removesuffix(".py").removesuffix(".js")
        base = base.removeprefix("mcp-server-").removeprefix("server-")
    name = re.sub(r"[^A-Za-z0-9_-]+", "-", base).strip("-_")[:40]
    return re.sub(r"_{2,}", "_", name) or "server"


class AddServerFlow(QDialog):
    submitted = Signal(list, dict)  # [(name, fields)], {secret name: value}
    chatRequested = Signal()

    def __init__(self, taken: set[str] | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Add a server")
        self.setAccessibleName("Add a server")
        self.setModal(False)
        self.setMinimumWidth(540)
        self.taken = taken or set()
        self.name: str | None = None
        column = QVBoxLayout(self)
        self.tabs = QTabWidget()
        self.tabs.setAccessibleName("how to add")
        self.tabs.addTab(self._preset_tab(), f"&{PRESET}")
        self.tabs.addTab(self._url_tab(), f"&{URL}")
        self.tabs.addTab(self._command_tab(), "C&ommand")
        column.addWidget(self.tabs, 1)
        form = QFormLayout()
        self.name_edit = QLineEdit()
        self.name_edit.setAccessibleName("server name")
        self.name_edit.setPlaceholderText("a short name, e.g. files")
        form.addRow("&Name:", self.name_edit)
        column.addLayout(form)
        self.secret_rows: dict[str, QLineEdit] = {}
        self.secret_form = QFormLayout()
        column.addLayout(self.secret_form)
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.status.setAccessibleName("status")
        self.status.hide()
        column.addWidget(self.status)
        row = QHBoxLayout()
        row.addStretch(1)
        self.cancel_button = QPushButton("Close")
        self.cancel_button.setAutoDefault(False)
        self.cancel_button.clicked.connect(self.close)
        row.addWidget(self.cancel_button)
        self.chat_button = QPushButton("Start &chatting")
        self.chat_button.setAutoDefault(False)
        self.chat_button.setAccessibleName("Start chatting")
        self.chat_button.clicked.connect(self._chat)
        self.chat_button.hide()
        row.addWidget(self.chat_button)
        self.add_button = QPushButton("&Add")
        self.add_button.setAccessibleName("Add")
        self.add_button.setAutoDefault(False)
        self.add_button.clicked.connect(self.submit)
        row.addWidget(self.add_button)
        column.addLayout(row)
        self.presets.setCurrentRow(0)

    # --- tabs --------------------------------------------------------------------------

    def _preset_tab(self) -> QWidget:
        page = QWidget()
        column = QVBoxLayout(page)
        self.presets = preset_list()
        self.presets.currentItemChanged.connect(self._preset_changed)
        column.addWidget(self.presets)
        return page

    def _url_tab(self) -> QWidget:
        page = QWidget()
        form = QFormLayout(page)
        self.url = QLineEdit()
        self.url.setAccessibleName("server URL")
        self.url.setPlaceholderText("https://mcp.example.com/mcp")
        self.url.textEdited.connect(lambda t: self._suggest(guess_name(t)))
        form.addRow("&URL:", self.url)
        note = QLabel("Servers that need a sign-in open it in your browser when they start.")
        note.setWordWrap(True)
        set_tone(note, "muted")
        form.addRow(note)
        return page

    def _command_tab(self) -> QWidget:
        page = QWidget()
        form = QFormLayout(page)
        self.command = QLineEdit()
        self.command.setAccessibleName("command")
        self.command.setPlaceholderText("npx -y @modelcontextprotocol/server-everything")
        self.command.textEdited.connect(lambda t: self._suggest(guess_name(t)))
        form.addRow("Co&mmand:", self.command)
        return page

    def _suggest(self, name: str) -> None:
        if not self.name_edit.isModified():
            self.name_edit.setText(self._free(name))

    def _free(self, name: str) -> str:
        final, n = name, 2
        while final in self.taken:
            final, n = f"{name}-{n}", n + 1
        return final

    def _preset_changed(self) -> None:
        item = self.presets.currentItem()
        if item is None:
            return
        name = str(item.data(Qt.ItemDataRole.UserRole))
        self._suggest(name)
        while self.secret_form.rowCount():
            self.secret_form.removeRow(0)
        self.secret_rows = {}
        for secret in PRESET_INFO[name].secrets:
            edit = QLineEdit()
            edit.setEchoMode(QLineEdit.EchoMode.Password)
            edit.setAccessibleName(secret)
            self.secret_form.addRow(f"{secret}:", edit)
            self.secret_rows[secret] = edit

    def select_tab(self, which: str) -> None:
        self.tabs.setCurrentIndex((PRESET, URL, COMMAND).index(which))
        if which != PRESET:
            while self.secret_form.rowCount():
                self.secret_form.removeRow(0)
            self.secret_rows = {}

    def select_preset(self, name: str) -> None:
        for row in range(self.presets.count()):
            if self.presets.item(row).data(Qt.ItemDataRole.UserRole) == name:
                self.presets.setCurrentRow(row)

    # --- answering ---------------------------------------------------------------------

    def fields(self) -> dict[str, Any]:
        tab = (PRESET, URL, COMMAND)[self.tabs.currentIndex()]
        if tab == PRESET:
            item = self.presets.currentItem()
            if item is None:
                raise ValueError("choose a preset")
            return preset_fields(str(item.data(Qt.ItemDataRole.UserRole)))
        if tab == URL:
            url = self.url.text().strip()
            if not url.startswith(("http://", "https://")):
                raise ValueError("enter the server's URL, starting with https://")
            return {"url": url}
        text = self.command.text().strip()
        if not text:
            raise ValueError("enter the command that starts the server")
        try:
            parts = shlex.split(text)
        except ValueError as exc:
            raise ValueError(f"the command does not parse: {exc}") from None
        fields: dict[str, Any] = {"command": parts[0]}
        if parts[1:]:
            fields["args"] = parts[1:]
        return fields

    def submit(self) -> None:
        name = self.name_edit.text().strip()
        try:
            problem = valid_server_name(name) if name else "give the server a name"
            if problem:
                raise ValueError(problem)
            if name in self.taken:
                raise ValueError(f"a server named {name!r} already exists; choose another name")
            fields = self.fields()
            secrets = {k: e.text() for k, e in self.secret_rows.items()}
            missing = [k for k, v in secrets.items() if not v]
            if missing:
                raise ValueError(f"enter {', '.join(missing)} (it goes to your keychain)")
        except ValueError as exc:
            self.say(str(exc)[0].upper() + str(exc)[1:] + ".", "error")
            return
        self.name = name
        self.add_button.setEnabled(False)
        self.say(f"Adding {name}…", "muted")
        self.submitted.emit([(name, fields)], secrets)

    def failed(self, text: str) -> None:
        self.add_button.setEnabled(True)
        self.say(text, "error")

    def show_state(self, state: ServerState) -> None:
        if state.name != self.name:
            return
        text = status_text(state)
        if state.status is Status.RUNNING:
            noun = "tool" if state.tool_count == 1 else "tools"
            self.say(f"{state.name} is running with {state.tool_count} {noun}.", "ok")
            self.chat_button.show()
            self.chat_button.setFocus()
        elif state.status in (Status.FAILED, Status.COOLDOWN):
            self.say(f"{state.name} did not start: {state.error or text}", "error")
            self.add_button.setEnabled(False)
        else:
            self.say(f"{state.name}: {text}", "muted")

    def say(self, text: str, tone: str) -> None:
        self.status.setText(text)
        set_tone(self.status, tone)  # type: ignore[arg-type]
        self.status.show()

    def _chat(self) -> None:
        self.chatRequested.emit()
        self.close()
