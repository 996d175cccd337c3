"""Tool approval and spend-limit approval. Enter never allows: Deny holds the focus."""

from __future__ import annotations

from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QCheckBox, QLabel, QPushButton, QWidget

from portico.prompts import (
    ApprovalAnswer,
    ApprovalChoice,
    Caller,
    SpendApprovalRequest,
    ToolApprovalRequest,
)
from portico.ui.dialogs.base import PromptDialog, esc, monospace_view, selectable_label
from portico.ui.palette import tone
from portico.ui.text import plain_label

CHOICE_LABELS: dict[ApprovalChoice, str] = {
    ApprovalChoice.ONCE: "Allow &Once",
    ApprovalChoice.SESSION: "Allow for &Session",
    ApprovalChoice.ALWAYS: "&Always Allow",
    ApprovalChoice.DENY: "&Deny",
}
_WIDENABLE = {ApprovalChoice.SESSION, ApprovalChoice.ALWAYS}


class _ApprovalBase(PromptDialog):
    def _add_choices(self, choices: tuple[ApprovalChoice, ...]) -> None:
        self.choice_buttons: dict[ApprovalChoice, QPushButton] = {}
        ordered = [c for c in CHOICE_LABELS if c in choices]
        if ApprovalChoice.DENY not in ordered:
            ordered.append(ApprovalChoice.DENY)  # a person can always say no
        for choice in ordered:
            button = QPushButton(CHOICE_LABELS[choice])
            button.setAccessibleName(CHOICE_LABELS[choice].replace("&", ""))
            button.setAutoDefault(False)  # no default button: Enter answers nothing
            button.setDefault(False)
            button.clicked.connect(lambda _=False, c=choice: self._choose(c))
            self.buttons_row.addWidget(button)
            self.choice_buttons[choice] = button
        self.deny_button = self.choice_buttons[ApprovalChoice.DENY]
        self.finish_layout()
        self.deny_button.setFocus()

    def _choose(self, choice: ApprovalChoice) -> None:
        raise NotImplementedError

    def showEvent(self, event) -> None:  # type: ignore[no-untyped-def]
        super().showEvent(event)
        self.deny_button.setFocus()


class ApprovalDialog(_ApprovalBase):
    def __init__(self, request: ToolApprovalRequest, parent: QWidget | None = None) -> None:
        super().__init__(request.server, "Allow tool call?", parent)
        self.request = request
        self.tool_label = selectable_label(
            _tool_html(request.tool, request.qualified_name), rich=True
        )
        self.tool_label.setAccessibleName("tool")
        self.layout_.addWidget(self.tool_label)
        self.client_label = _client_label(request.caller)
        self.layout_.addWidget(self.client_label)
        if request.description:
            description = selectable_label(request.description)
            description.setAccessibleName("description")
            self.layout_.addWidget(description)
        if request.reason:
            self.layout_.addWidget(plain_label(f"Asked because: {request.reason}"))
        self.layout_.addWidget(QLabel("Arguments:"))
        self.arguments_view = monospace_view(request.arguments_json)
        self.arguments_view.setAccessibleName("arguments")
        self.layout_.addWidget(self.arguments_view, 1)
        self.cost_label = selectable_label(request.cost_line or "")
        self.cost_label.setAccessibleName("cost")
        self.cost_label.setVisible(bool(request.cost_line))
        self.layout_.addWidget(self.cost_label)
        self.spend_label = selectable_label(request.spend_line or "")
        self.spend_label.setAccessibleName("spend")
        self.spend_label.setVisible(bool(request.spend_line))
        self.layout_.addWidget(self.spend_label)
        self.any_arguments: QCheckBox | None = None
        if request.offers_any_arguments and _WIDENABLE & set(request.choices):
            self.any_arguments = QCheckBox("Also allow with any a&rguments")
            self.any_arguments.setAccessibleName("Also allow with any arguments")
            self.any_arguments.setToolTip(
                "Applies to Allow for Session and Always Allow; Allow Once covers this call only."
            )
            self.layout_.addWidget(self.any_arguments)
        self._add_choices(request.choices)
        self.resize(560, 420)

    def _choose(self, choice: ApprovalChoice) -> None:
        widen = (
            self.any_arguments is not None
            and self.any_arguments.isChecked()
            and choice in _WIDENABLE
        )
        self.answer(ApprovalAnswer(choice, any_arguments=widen))

    def decline_value(self) -> ApprovalAnswer:
        return ApprovalAnswer(ApprovalChoice.DENY)


class SpendDialog(_ApprovalBase):
    def __init__(self, request: SpendApprovalRequest, parent: QWidget | None = None) -> None:
        super().__init__(request.server, "Spend limit reached", parent)
        self.request = request
        self.tool_label = selectable_label(
            _tool_html(request.tool, request.qualified_name), rich=True
        )
        self.layout_.addWidget(self.tool_label)
        self.client_label = _client_label(request.caller)
        self.layout_.addWidget(self.client_label)
        self.limit_label = selectable_label(request.limit_line)
        self.limit_label.setAccessibleName("limit")
        self.layout_.addWidget(self.limit_label)
        self.cost_label = selectable_label(request.cost_line)
        self.cost_label.setAccessibleName("cost")
        self.layout_.addWidget(self.cost_label)
        self.spend_label = selectable_label(request.spend_line)
        self.spend_label.setAccessibleName("spend")
        self.layout_.addWidget(self.spend_label)
        self.layout_.addWidget(QLabel("Arguments:"))
        self.arguments_view = monospace_view(request.arguments_json)
        self.arguments_view.setAccessibleName("arguments")
        self.layout_.addWidget(self.arguments_view, 1)
        allowed = tuple(
            c for c in request.choices if c in (ApprovalChoice.ONCE, ApprovalChoice.DENY)
        )
        self._add_choices(allowed)
        self.resize(520, 360)

    def _choose(self, choice: ApprovalChoice) -> None:
        self.answer(choice)

    def decline_value(self) -> ApprovalChoice:
        return ApprovalChoice.DENY


def client_line(caller: Caller | None) -> str:
    """Who asks, when another MCP client asks through the local endpoint; else ""."""
    if caller is None or caller.kind != "client":
        return ""
    who = f"The client '{caller.id}'" if caller.id else "Another MCP client"
    return f"{who} asks for this call through Portico's local endpoint."


def _client_label(caller: Caller | None) -> QLabel:
    # The client's name is what the person typed at `portico clients add`, but it
    # still goes through plain_label: it reaches the dialog from a file on disk.
    line = client_line(caller)
    label = plain_label(line)
    label.setAccessibleName("client")
    label.setVisible(bool(line))
    return label


def _tool_html(tool: str, qualified: str) -> str:
    muted = tone("muted", role=QPalette.ColorRole.Window)
    return f"<b>{esc(tool)}</b> <span style='color:{muted}'>({esc(qualified)})</span>"
