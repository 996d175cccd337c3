"""Device login: the verification link and the user code in large type, the poller's real
state (``request.status``, reported by the core: waiting, slowing down, approved, denied,
expired) and how long the code stays valid."""

from __future__ import annotations

from PySide6.QtCore import Qt, QUrl, Signal
from PySide6.QtGui import QDesktopServices, QGuiApplication
from PySide6.QtWidgets import QHBoxLayout, QLabel, QWidget

from portico.prompts import DeviceCodeRequest
from portico.ui.dialogs.base import PromptDialog, action_button, large_font, selectable_label
from portico.ui.dialogs.countdown import Countdown
from portico.ui.dialogs.url_lines import add_url_lines


class DeviceDialog(PromptDialog):
    statusShown = Signal(str)  # the poll state now on screen

    def __init__(self, request: DeviceCodeRequest, parent: QWidget | None = None) -> None:
        super().__init__(request.server, "Sign in on another device", parent)
        self.request = request
        self.layout_.addWidget(QLabel("Open this address on any device and enter the code:"))
        self.url_label = selectable_label(request.verification_uri)
        self.url_label.setFont(large_font(self.font(), 1.3))
        self.url_label.setAccessibleName("verification address")
        self.layout_.addWidget(self.url_label)
        self.url_lines = add_url_lines(
            self.layout_, request.verification_uri_complete or request.verification_uri
        )
        self.code_label = selectable_label(request.user_code, mono=True)
        self.code_label.setFont(large_font(self.code_label.font(), 2.6))
        self.code_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.code_label.setAccessibleName("user code")
        self.layout_.addWidget(self.code_label)
        row = QHBoxLayout()
        self.open_button = action_button("Open in &browser", self.open_in_browser)
        self.copy_button = action_button("&Copy code", self.copy_code)
        row.addStretch(1)
        row.addWidget(self.open_button)
        row.addWidget(self.copy_button)
        row.addStretch(1)
        self.layout_.addLayout(row)
        self.state_label = QLabel()
        self.state_label.setWordWrap(True)
        self.state_label.setAccessibleName("polling state")
        self.layout_.addWidget(self.state_label)
        self.expiry_label = QLabel()
        self.expiry_label.setAccessibleName("code validity")
        self.layout_.addWidget(self.expiry_label)
        every = f"{request.interval:g}"
        self.set_status(request.status.text or f"Waiting for approval (checking every {every} s)…")
        self.cancel_button = self.add_button("Cancel", None)
        self.finish_layout()
        self.timer = Countdown(
            self.expiry_label,
            request.expires_in,
            lambda left: f"The code is valid for {left}.",
            "The code has expired.",
        )

    def open_in_browser(self) -> None:
        QDesktopServices.openUrl(
            QUrl(self.request.verification_uri_complete or self.request.verification_uri)
        )

    def copy_code(self) -> None:
        QGuiApplication.clipboard().setText(self.request.user_code)
        self.copy_button.setText("Copied")

    def set_status(self, text: str) -> None:
        """Show the poller's state (GUI thread only; the prompter hops here)."""
        self.state_label.setText(text)
        self.statusShown.emit(text)

    def decline_value(self) -> None:
        return None
