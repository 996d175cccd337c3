"""A place of the window's rail whose real widget comes later: until then it holds an
empty placeholder of the same size and background (nothing that would flash away), with
a busy cursor over it. ``fill`` swaps the real widget in without changing the geometry."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QStackedLayout, QWidget


class PlaceSlot(QWidget):
    def __init__(self, name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName(name)
        self.placeholder: QWidget | None = QWidget()
        self.placeholder.setAccessibleName(f"{name} (loading)")
        self.placeholder.setCursor(Qt.CursorShape.BusyCursor)
        self._stack = QStackedLayout(self)
        self._stack.setContentsMargins(0, 0, 0, 0)
        self._stack.addWidget(self.placeholder)
        self.content: QWidget | None = None

    def fill(self, widget: QWidget) -> None:
        """Show ``widget`` in the slot (once); the placeholder goes away."""
        if self.content is not None:
            raise RuntimeError(f"the {self.accessibleName()} place is already built")
        self.content = widget
        self._stack.addWidget(widget)
        self._stack.setCurrentWidget(widget)
        if self.placeholder is not None:
            self._stack.removeWidget(self.placeholder)
            self.placeholder.deleteLater()
            self.placeholder = None
