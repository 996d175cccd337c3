"""OAuth hand-off: the authorize link, a countdown, and paste-back with instant feedback."""

from __future__ import annotations

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices, QGuiApplication
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QWidget

from portico.prompts import AuthorizeRequest
from portico.ui.dialogs.base import PromptDialog, action_button, selectable_label
from portico.ui.dialogs.countdown import Countdown, format_remaining
from portico.ui.dialogs.url_lines import add_url_lines
from portico.ui.palette import set_tone

__all__ = ["OAuthDialog", "format_remaining"]

COPY_HINT = "If no browser opened, use Copy link and open the link in a browser yourself."


class OAuthDialog(PromptDialog):
    def __init__(self, request: AuthorizeRequest, parent: QWidget | None = None) -> None:
        title = "Sign in again" if request.reauth else "Sign in"
        super().__init__(request.server, title, parent)
        self.request = request
        if request.reauth:
            intro = f"{request.server} needs you to sign in again."
        else:
            intro = f"Sign in to {request.server} in your browser."
        if request.browser_opened:
            # Asking the system to open a browser can succeed without any browser showing
            # up (a missing handler behind xdg-open): say what to do if none did.
            intro += " The sign-in page was sent to your browser. " + COPY_HINT
        else:
            intro += " No browser could be opened here: copy the link and open it in one."
        self.intro = QLabel(intro)
        self.intro.setWordWrap(True)
        self.layout_.addWidget(self.intro)

        self.url_lines = add_url_lines(
            self.layout_, request.authorize_url, what="The sign-in page is on"
        )
        self.url_field = QLineEdit(request.authorize_url)
        self.url_field.setReadOnly(True)
        self.url_field.setAccessibleName("authorize link")
        self.url_field.setCursorPosition(0)
        self.layout_.addWidget(self.url_field)
        row = QHBoxLayout()
        self.open_button = action_button("Open in &browser", self.open_in_browser)
        self.copy_button = action_button("&Copy link", self.copy_link)
        row.addWidget(self.open_button)
        row.addWidget(self.copy_button)
        row.addStretch(1)
        self.layout_.addLayout(row)

        self.countdown = QLabel()
        self.countdown.setAccessibleName("time left")
        self.layout_.addWidget(self.countdown)

        self.layout_.addWidget(
            selectable_label(
                "If the browser cannot reach this computer, paste the address it ended on "
                f"(starting with {request.redirect_uri}) or just its ?code=…&state=… part:"
            )
        )
        self.paste_field = QLineEdit()
        self.paste_field.setPlaceholderText("Paste the redirect URL or ?code=…&state=…")
        self.paste_field.setAccessibleName("pasted redirect")
        self.paste_field.textChanged.connect(self._check)
        self.paste_field.returnPressed.connect(self._submit)
        self.layout_.addWidget(self.paste_field)
        self.feedback = QLabel()
        self.feedback.setAccessibleName("paste feedback")
        self.feedback.setWordWrap(True)
        self.layout_.addWidget(self.feedback)

        self.continue_button = action_button("C&ontinue", self._submit)
        self.continue_button.setEnabled(False)
        self.buttons_row.addWidget(self.continue_button)
        self.cancel_button = self.add_button("Cancel", None)
        self.finish_layout()

        self.timer = Countdown(
            self.countdown,
            request.timeout,
            lambda left: f"Waiting for the sign-in… {left} left",
            "Time is up: this sign-in attempt has expired.",
        )
        self.resize(560, 300)

    def open_in_browser(self) -> bool:
        opened = QDesktopServices.openUrl(QUrl(self.request.authorize_url))
        if not opened:
            self.intro.setText(
                "The browser could not be opened. Use Copy link and open the link in a "
                "browser yourself."
            )
            set_tone(self.intro, "warning")
        return bool(opened)

    def copy_link(self) -> None:
        QGuiApplication.clipboard().setText(self.request.authorize_url)
        self.copy_button.setText("Copied")

    def remaining(self) -> float:
        return self.timer.remaining()

    def _problem(self, text: str) -> str | None:
        text = text.strip()
        if not text:
            return ""
        try:
            return self.request.check_paste(text)
        except Exception as exc:  # the checker must never take the dialog down
            return f"Could not check the pasted text: {exc}"

    def _check(self, text: str) -> None:
        problem = self._problem(text)
        ok = problem is None
        self.continue_button.setEnabled(ok)
        if problem == "":
            self.feedback.setText("")
        elif ok:
            self.feedback.setText("✓ Looks right. Press Continue.")
            set_tone(self.feedback, "ok")
        else:
            self.feedback.setText(f"✗ {problem}")
            set_tone(self.feedback, "error")

    def _submit(self) -> None:
        if self._problem(self.paste_field.text()) is None:
            self.answer(self.paste_field.text().strip())

    def decline_value(self) -> None:
        return None
