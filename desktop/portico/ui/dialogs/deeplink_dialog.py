"""Confirm a ``portico://add`` link: where it would send requests (or what it would run),
each of your secrets and every value it would get, the exact text that would be written
and where; every line whole (wrapped, never cut or scrolled away)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import QFormLayout, QLabel, QWidget

from portico.policy.link_review import LinkReview, review_link
from portico.text import visible
from portico.ui.dialogs.base import PromptDialog, selectable_label
from portico.ui.dialogs.wrapped_text import WrappedText
from portico.ui.palette import set_tone

if TYPE_CHECKING:
    from portico.config.deeplink import Prepared

WARNING = (
    "A web page asked to add this server. Add it only if you trust where the link came "
    "from: a command server runs that command on this computer, and a web server gets "
    "every secret listed above."
)


class DeepLinkDialog(PromptDialog):
    """Answers True (add) or False (cancel, Esc, closing the window)."""

    def __init__(
        self, prepared: Prepared, parent: QWidget | None = None, review: LinkReview | None = None
    ) -> None:
        super().__init__(prepared.request.name, "Add server from a link", parent)
        self.prepared = prepared
        self.review = review = review if review is not None else review_link(prepared)
        self.setMinimumWidth(640)
        form = QFormLayout()
        self.file_label = selectable_label(str(prepared.path))
        self.file_label.setAccessibleName("file")
        form.addRow("Adds to:", self.file_label)
        self.layout_.addLayout(form)

        self.target_view = WrappedText("\n".join(review.target))
        self.target_view.setAccessibleName("where it goes")
        self.layout_.addWidget(self.target_view)
        self.warning_labels: list[QLabel] = []
        for warning in review.url.warnings if review.url is not None else ():
            label = selectable_label(visible(f"Warning: {warning}"))
            set_tone(label, "error")
            label.setAccessibleName("warning")
            self.warning_labels.append(label)
            self.layout_.addWidget(label)

        if review.secrets:
            self.layout_.addWidget(QLabel("It would receive these secrets of yours:"))
            secrets = "\n".join(review.secrets)
        else:
            self.layout_.addWidget(QLabel("It would receive none of your secrets."))
            secrets = ""
        self.secrets_view = WrappedText(secrets)
        self.secrets_view.setAccessibleName("secrets")
        self.secrets_view.setVisible(bool(review.secrets))
        self.layout_.addWidget(self.secrets_view)
        self.values_view = WrappedText("\n".join(review.values))
        self.values_view.setAccessibleName("values")
        self.values_view.setVisible(bool(review.values))
        if review.values:
            self.layout_.addWidget(QLabel("It would get these values, as written:"))
        self.layout_.addWidget(self.values_view)

        self.layout_.addWidget(QLabel("These lines would be written:"))
        self.text_view = WrappedText(prepared.added)
        self.text_view.setAccessibleName("text to write")
        self.layout_.addWidget(self.text_view)
        self.pending_label = selectable_label(review.pending)
        self.pending_label.setAccessibleName("review")
        self.layout_.addWidget(self.pending_label)
        self.warning = selectable_label(WARNING)
        self.warning.setAccessibleName("warning")
        self.layout_.addWidget(self.warning)
        self.cancel_button = self.add_button("Cancel", False)
        self.add_button_ = self.add_button("&Add server", True, name="Add server")
        self.finish_layout()
        self.cancel_button.setFocus()

    def views(self) -> tuple[WrappedText, ...]:
        return (self.target_view, self.secrets_view, self.values_view, self.text_view)

    def decline_value(self) -> bool:
        return False
