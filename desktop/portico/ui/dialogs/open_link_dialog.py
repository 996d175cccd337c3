"""Ask before a link from a chat opens when its address could mislead: the text of a
link is the model's (or a tool's) to choose, so ``[github.com](https://ɡithub.com/…)``
reads as one site and goes to another. An address with a look-alike name, a user name
before the host, an IP address or plain http is shown the way every URL is (the site
first, punycode beside Unicode, each warning) and opens only on Open in browser."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from portico.policy.url_review import UrlReview
from portico.ui.dialogs.base import action_button
from portico.ui.dialogs.url_lines import add_url_lines
from portico.ui.dialogs.wrapped_text import WrappedText


class OpenLinkDialog(QDialog):
    """Non-modal; calls ``opener(url)`` only when the person presses Open in browser."""

    def __init__(
        self, url: str, opener: Callable[[str], object], parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.url = url
        self._opener = opener
        self.setModal(False)
        self.setWindowModality(Qt.WindowModality.NonModal)
        self.setWindowTitle("Open this link?")
        self.setAccessibleName("Open this link?")
        self.setMinimumWidth(520)
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("The link in the conversation opens this address:"))
        self.lines = add_url_lines(layout, url)
        self.address = WrappedText(self.lines.review.shown_url)
        self.address.setAccessibleName("address")
        layout.addWidget(self.address)
        row = QHBoxLayout()
        row.addStretch(1)
        self.cancel_button = action_button("Cancel", self.reject)
        self.open_button = action_button("&Open in browser", self._open, name="Open in browser")
        row.addWidget(self.cancel_button)
        row.addWidget(self.open_button)
        layout.addLayout(row)
        self.cancel_button.setFocus()

    @property
    def review(self) -> UrlReview:
        return self.lines.review

    def _open(self) -> None:
        self._opener(self.url)
        self.accept()


_SHOWN: set[OpenLinkDialog] = set()  # a dialog without a parent lives while it is shown


def ask_before_opening(
    url: str, opener: Callable[[str], object], parent: QWidget | None = None
) -> OpenLinkDialog:
    dialog = OpenLinkDialog(url, opener, parent)
    _SHOWN.add(dialog)
    dialog.finished.connect(lambda _result: _SHOWN.discard(dialog))
    dialog.show()
    return dialog
