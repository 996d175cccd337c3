"""Confirm a ``portico://add`` link: the exact text that would be written, and where."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import QFormLayout, QLabel, QWidget

from portico.ui.dialogs.base import PromptDialog, monospace_view, selectable_label

if TYPE_CHECKING:
    from portico.config.deeplink import Prepared

WARNING = (
    "A web page asked to add this server. Add it only if you trust where the link came "
    "from: a command server runs that command on this computer."
)


class DeepLinkDialog(PromptDialog):
    """Answers True (add) or False (cancel, Esc, closing the window)."""

    def __init__(self, prepared: Prepared, parent: QWidget | None = None) -> None:
        super().__init__(prepared.request.name, "Add server from a link", parent)
        self.prepared = prepared
        self.setMinimumWidth(640)  # the file header line fits without scrolling
        form = QFormLayout()
        self.file_label = selectable_label(str(prepared.path))
        self.file_label.setAccessibleName("file")
        form.addRow("Adds to:", self.file_label)
        self.layout_.addLayout(form)
        self.layout_.addWidget(QLabel("These lines would be written:"))
        self.text_view = monospace_view(prepared.added)
        self.text_view.setAccessibleName("text to write")
        self.text_view.setMinimumHeight(140)
        self.layout_.addWidget(self.text_view)
        self.warning = selectable_label(WARNING)
        self.warning.setAccessibleName("warning")
        self.layout_.addWidget(self.warning)
        self.cancel_button = self.add_button("Cancel", False)
        self.add_button_ = self.add_button("&Add server", True, name="Add server")
        self.finish_layout()
        self.cancel_button.setFocus()

    def decline_value(self) -> bool:
        return False
