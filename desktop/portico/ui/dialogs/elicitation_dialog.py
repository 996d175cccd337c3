"""Elicitation: a form built from the server's requested JSON schema (or a URL to visit)."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

from PySide6.QtWidgets import QLabel, QWidget

from portico.prompts import ElicitationAnswer, ElicitationRequest
from portico.text import visible
from portico.ui.dialogs.base import PromptDialog, selectable_label
from portico.ui.palette import set_tone
from portico.ui.schema_form import Field, SchemaForm
from portico.ui.text import plain_label, set_plain

if TYPE_CHECKING:
    from portico.policy.url_review import UrlReview

__all__ = ["ElicitationDialog", "Field"]


class ElicitationDialog(PromptDialog):
    def __init__(self, request: ElicitationRequest, parent: QWidget | None = None) -> None:
        super().__init__(request.server, "The server asks for information", parent)
        self.request = request
        self.message = selectable_label(request.message)
        self.message.setAccessibleName("message")
        self.layout_.addWidget(self.message)
        self.error_label = plain_label(request.error or "", multiline=True)
        set_tone(self.error_label, "error")
        self.error_label.setAccessibleName("error")
        self.error_label.setVisible(bool(request.error))
        self.layout_.addWidget(self.error_label)
        self.fields: dict[str, Field] = {}
        self.warning_labels: list[QLabel] = []
        if request.mode == "url":
            from portico.policy.url_review import review_url

            review = review_url(request.url or "")
            self.layout_.addWidget(QLabel("The server asks you to open this page in your browser:"))
            # The registrable domain first (with its punycode form), then the whole URL.
            self.site_label = selectable_label(visible(f"The site is {review.site}"))
            self.site_label.setAccessibleName("site")
            self.layout_.addWidget(self.site_label)
            if review.host and review.host != (review.registrable_domain or review.host):
                host = selectable_label(visible(f"Host: {review.host_line}"))
                host.setAccessibleName("host")
                self.layout_.addWidget(host)
            self.url_label = selectable_label(_url_markup(review), mono=True, rich=True)
            self.url_label.setAccessibleName("address")
            self.layout_.addWidget(self.url_label)
            for warning in review.warnings:
                label = plain_label(f"Warning: {warning}")
                set_tone(label, "error")
                label.setAccessibleName("warning")
                self.warning_labels.append(label)
                self.layout_.addWidget(label)
        else:
            self.form = SchemaForm(request.schema, request.defaults)
            self.fields = self.form.fields
            self.layout_.addWidget(self.form)
            if self.form.has_required:
                self.layout_.addWidget(QLabel("* required"))
        accept_text = "&Open in browser" if request.mode == "url" else "&Accept"
        self.accept_button = self.add_button(accept_text, None)
        self.accept_button.clicked.disconnect()
        self.accept_button.clicked.connect(self._accept)
        self.decline_button = self.add_button(
            "&Decline", ElicitationAnswer("decline"), name="Decline"
        )
        self.cancel_button = self.add_button("Cancel", ElicitationAnswer("cancel"))
        self.finish_layout()

    def content(self) -> dict[str, Any]:
        return self.form.content() if self.fields else {}

    def missing(self) -> list[str]:
        return self.form.missing() if self.fields else []

    def _accept(self) -> None:
        if self.request.mode == "url":
            self.answer(ElicitationAnswer("accept"))
            return
        problems = self.form.problems()
        if problems:
            set_plain(self.error_label, "\n".join(problems), multiline=True)
            self.error_label.show()
            return
        self.answer(ElicitationAnswer("accept", self.content()))

    def decline_value(self) -> ElicitationAnswer:
        return ElicitationAnswer("cancel")


def _url_markup(review: UrlReview) -> str:
    """The whole URL, escaped, with the host in bold (the part that says whose site it is)."""
    if not review.host:
        return html.escape(visible(review.shown_url))
    return (
        f"{html.escape(visible(review.before_host))}<b>{html.escape(visible(review.host))}</b>"
        f"{html.escape(visible(review.after_host))}"
    )
