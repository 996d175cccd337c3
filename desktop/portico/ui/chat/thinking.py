"""What the model thought before an answer, collapsed under one line until clicked."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QPushButton, QVBoxLayout, QWidget

from portico.ui.palette import set_tone


class ThinkingView(QWidget):
    """A "Thinking" toggle over the thought text (plain text: it is the model's)."""

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("thinking")
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(2)
        self.toggle = QPushButton()
        self.toggle.setFlat(True)
        self.toggle.setAutoDefault(False)
        self.toggle.setAccessibleName("Show thinking")
        self.toggle.clicked.connect(self._toggled)
        set_tone(self.toggle, "muted")
        column.addWidget(self.toggle, 0, Qt.AlignmentFlag.AlignLeft)
        self.body = QLabel()
        self.body.setTextFormat(Qt.TextFormat.PlainText)
        self.body.setWordWrap(True)
        self.body.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.body.setAccessibleName("thought")
        set_tone(self.body, "muted")
        self.body.hide()
        column.addWidget(self.body)
        self.text = ""
        self.set_text(text)

    @property
    def expanded(self) -> bool:
        return not self.body.isHidden()

    def set_text(self, text: str) -> None:
        self.text = text
        self.body.setText(text)
        self._label()

    def append(self, delta: str) -> None:
        self.set_text(self.text + delta)

    def _toggled(self) -> None:
        self.body.setVisible(not self.expanded)
        self._label()
        self.updateGeometry()

    def _label(self) -> None:
        words = len(self.text.split())
        arrow = "▾" if self.expanded else "▸"
        self.toggle.setText(f"{arrow} Thinking ({words} word{'s' if words != 1 else ''})")
        self.toggle.setAccessibleName("Hide thinking" if self.expanded else "Show thinking")
