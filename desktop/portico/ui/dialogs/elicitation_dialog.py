"""Elicitation: a form built from the server's requested JSON schema (or a URL to visit)."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QLabel, QWidget

from portico.prompts import ElicitationAnswer, ElicitationRequest
from portico.ui.dialogs.base import PromptDialog, esc, selectable_label
from portico.ui.palette import set_tone
from portico.ui.schema_form import Field, SchemaForm
from portico.ui.text import plain_label, set_plain

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
            self.layout_.addWidget(QLabel("The server asks you to open this page in your browser:"))
            self.url_label = selectable_label(_url_markup(request), mono=True, rich=True)
            self.url_label.setAccessibleName("address")
            self.layout_.addWidget(self.url_label)
            if request.url_host:
                site = selectable_label(f"The site is {request.url_host}")
                site.setAccessibleName("site")
                self.layout_.addWidget(site)
            for warning in request.url_warnings:
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


def _url_markup(request: ElicitationRequest) -> str:
    """The whole URL, escaped, with the host in bold (the part that says whose site it is)."""
    url = request.url or ""
    host = request.url_host
    if not host:
        return esc(url)
    from portico.policy.url_review import review_url

    review = review_url(url)
    return f"{esc(review.before_host)}<b>{esc(review.host)}</b>{esc(review.after_host)}"
