"""The Test button's result: what ``portico mcp test`` prints, in a non-modal window."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QVBoxLayout, QWidget

from portico.ui.dialogs.base import monospace_view


class TestResultDialog(QDialog):
    __test__ = False  # not a pytest class

    def __init__(self, server: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setModal(False)
        self.setWindowModality(Qt.WindowModality.NonModal)
        self.setWindowTitle(f"Test — {server}")
        self.setAccessibleName(f"Test result for {server}")
        self.resize(620, 420)
        column = QVBoxLayout(self)
        self.status = QLabel(f"Connecting {server} (nothing is saved)…")
        self.status.setAccessibleName("test status")
        column.addWidget(self.status)
        self.view = monospace_view("")
        self.view.setAccessibleName("test output")
        column.addWidget(self.view, 1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.close)
        column.addWidget(buttons)
        self.result: Any = None

    def show_result(self, result: Any, lines: list[str]) -> None:
        self.result = result
        self.status.setText("Connected." if result.ok else "The server did not connect.")
        self.view.setPlainText("\n".join(lines))

    def show_error(self, text: str) -> None:
        self.status.setText("The test could not run.")
        self.view.setPlainText(text)
