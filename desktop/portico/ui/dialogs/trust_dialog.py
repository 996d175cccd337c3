"""Trust review: what would run or be contacted, from where, and why we ask."""

from __future__ import annotations

from PySide6.QtWidgets import QFormLayout, QLabel, QWidget

from portico.policy.prompters import trust_level_line
from portico.prompts import TrustChoice, TrustRequest
from portico.ui.dialogs.base import PromptDialog, esc, selectable_label
from portico.ui.text import plain_label


class TrustDialog(PromptDialog):
    def __init__(self, request: TrustRequest, parent: QWidget | None = None) -> None:
        super().__init__(request.server, "Review trust", parent)
        self.request = request
        form = QFormLayout()
        what = "Command" if request.transport == "stdio" else "URL"
        self.target = selectable_label(request.target, mono=True)
        self.target.setAccessibleName(what)
        form.addRow(f"{what}:", self.target)
        form.addRow("Transport:", plain_label(request.transport))
        self.source = selectable_label(request.source)
        form.addRow("Defined in:", self.source)
        if request.project:
            form.addRow("Project:", selectable_label(request.project))
        if request.env_names:
            form.addRow("Environment:", selectable_label(", ".join(request.env_names), mono=True))
        if request.header_names:
            form.addRow("Headers:", selectable_label(", ".join(request.header_names), mono=True))
        self.trust_level = selectable_label(trust_level_line(request.trust_level))
        self.trust_level.setAccessibleName("trust level")
        form.addRow("Trust level:", self.trust_level)
        if request.costs:
            self.costs = selectable_label("\n".join(request.costs))
            self.costs.setAccessibleName("costs")
            form.addRow("Costs:", self.costs)
        if request.secrets:
            self.secrets = selectable_label("\n".join(request.secrets), mono=True)
            self.secrets.setAccessibleName("your secrets it would receive")
            form.addRow("Your secrets it would receive:", self.secrets)
        if request.launch:
            # One line each, whole: the label wraps, nothing is cut or elided.
            self.launch = selectable_label("\n".join(request.launch), mono=True)
            self.launch.setAccessibleName("launch")
            form.addRow("Launch:", self.launch)
        if request.pinned_files:
            self.pinned = selectable_label("\n".join(request.pinned_files), mono=True)
            self.pinned.setAccessibleName("project files it loads")
            self.pinned.setToolTip("Pinned by content: a change to any of them asks again.")
            form.addRow("Project files it loads:", self.pinned)
        if request.sandbox:
            self.sandbox = selectable_label("\n".join(request.sandbox), mono=True)
            self.sandbox.setAccessibleName("sandbox")
            form.addRow("Sandbox:", self.sandbox)
        self.layout_.addLayout(form)
        if request.loosenings:
            items = "".join(f"<li>{esc(line)}</li>" for line in request.loosenings)
            self.loosenings = selectable_label(
                f"<p>This server would:</p><ul>{items}</ul>", rich=True
            )
            self.loosenings.setAccessibleName("loosenings")
            self.layout_.addWidget(self.loosenings)
        if request.env_names or request.header_names:
            self.layout_.addWidget(QLabel("Secret values are hidden; a reference shows its name."))
        reasons = request.reasons or ("This server has not been reviewed yet.",)
        items = "".join(f"<li>{esc(r)}</li>" for r in reasons)
        self.reasons = selectable_label(f"<p>Why you are asked:</p><ul>{items}</ul>", rich=True)
        self.reasons.setAccessibleName("reasons")
        self.layout_.addWidget(self.reasons)

        self.once_button = self.add_button(
            "Connect &once (O)", TrustChoice.ONCE, name="Connect once"
        )
        self.trust_button = self.add_button("&Trust (P)", TrustChoice.TRUST, name="Trust")
        self.reject_button = self.add_button("&Reject (R)", TrustChoice.REJECT, name="Reject")
        if not request.can_persist:
            self.trust_button.setEnabled(False)
            self.trust_button.setToolTip("Cannot be remembered right now; connect once instead.")
        self.trust_button.setToolTip(
            self.trust_button.toolTip() or "Remember this exact configuration as trusted."
        )
        self.reject_button.setToolTip(
            "Remember the rejection in your own trust store; Review trust… can undo it."
        )
        self.add_key("O", self.once_button)
        self.add_key("P", self.trust_button)
        self.add_key("R", self.reject_button)
        self.finish_layout()
        self.once_button.setFocus()

    def decline_value(self) -> TrustChoice:
        return TrustChoice.DECLINE
