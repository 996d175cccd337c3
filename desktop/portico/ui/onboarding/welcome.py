"""The first-run welcome in the Chats place: Add a server, Import from another app (only
the files that exist, with their server counts), Connect a model. Direct mode in one line."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from portico.ui.dialogs.base import large_font
from portico.ui.onboarding.setup import FoundImport
from portico.ui.palette import set_tone

DIRECT_MODE = (
    "No model needed to start: tools, prompts and resources work in direct mode — "
    "type / in the chat to run a prompt, /call a tool or @ a resource."
)
COLUMN_WIDTH = 540  # px at most: lines stay short enough to read on a wide window
MIN_COLUMN_WIDTH = 280  # px: below that the pane scrolls sideways instead of squeezing


def _action(text: str, name: str, detail: str) -> tuple[QPushButton, QLabel]:
    button = QPushButton(text)
    button.setAccessibleName(name)
    button.setAutoDefault(False)
    button.setMinimumHeight(36)
    label = QLabel(detail)
    label.setWordWrap(True)
    set_tone(label, "muted")
    return button, label


class WelcomePage(QWidget):
    addServerRequested = Signal()
    importRequested = Signal(object)  # FoundImport
    connectModelRequested = Signal()
    startChatRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("welcome")
        # A scroll area: on a short window (960×620 with several imports found) the column
        # scrolls; its labels wrap to the width they get instead of being clipped.
        self.scroll_area = QScrollArea()
        self.scroll_area.setFrameShape(QFrame.Shape.NoFrame)
        self.scroll_area.setWidgetResizable(True)
        self.scroll_area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(self.scroll_area)
        page = QWidget()
        page_layout = QVBoxLayout(page)
        page_layout.setContentsMargins(24, 32, 24, 24)
        centred = QHBoxLayout()
        page_layout.addLayout(centred)
        page_layout.addStretch(1)
        box = QWidget()
        box.setMinimumWidth(MIN_COLUMN_WIDTH)
        box.setMaximumWidth(COLUMN_WIDTH)
        box.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        centred.addStretch(1)
        centred.addWidget(box, 100)  # as wide as the pane allows, up to COLUMN_WIDTH
        centred.addStretch(1)
        column = QVBoxLayout(box)
        column.setSpacing(8)
        title = QLabel("Welcome to Portico")
        title.setFont(large_font(title.font(), 1.6))
        column.addWidget(title)
        intro = QLabel(
            "Portico connects models to tools through MCP servers. Pick any of these to start;"
            " each one ends in something you can use right away."
        )
        intro.setWordWrap(True)
        column.addWidget(intro)
        column.addSpacing(12)

        self.add_button, detail = _action(
            "Add a &server…",
            "Add a server",
            "A ready-made preset, a command on this computer, or a server's URL.",
        )
        self.add_button.clicked.connect(self.addServerRequested)
        column.addWidget(self.add_button)
        column.addWidget(detail)
        column.addSpacing(8)

        self.import_title = QLabel("<b>Import from another app</b>")
        column.addWidget(self.import_title)
        self.import_box = QVBoxLayout()
        column.addLayout(self.import_box)
        self.import_note = QLabel("Looking for other apps' MCP settings…")
        self.import_note.setWordWrap(True)
        set_tone(self.import_note, "muted")
        column.addWidget(self.import_note)
        self.import_buttons: list[QPushButton] = []
        column.addSpacing(8)

        self.model_button, detail = _action(
            "Connect a &model…",
            "Connect a model",
            "A model server running on this computer (found for you), an OpenAI-compatible "
            "URL with its key, or an Anthropic key.",
        )
        self.model_button.clicked.connect(self.connectModelRequested)
        column.addWidget(self.model_button)
        column.addWidget(detail)
        column.addSpacing(12)

        self.direct = QLabel(DIRECT_MODE)
        self.direct.setWordWrap(True)
        self.direct.setAccessibleName("direct mode")
        column.addWidget(self.direct)
        self.chat_button = QPushButton("Go to the &chat")
        self.chat_button.setAccessibleName("Go to the chat")
        self.chat_button.setAutoDefault(False)
        self.chat_button.clicked.connect(self.startChatRequested)
        column.addWidget(self.chat_button, 0, Qt.AlignmentFlag.AlignLeft)
        self.scroll_area.setWidget(page)
        page.setAutoFillBackground(False)  # the pane's own background (setWidget turned it on)

    def set_imports(self, found: Sequence[FoundImport]) -> None:
        for button in self.import_buttons:
            button.deleteLater()
        self.import_buttons = []
        usable = [f for f in found if not f.problem and f.count]
        for item in found:
            button = QPushButton(item.line)
            button.setAccessibleName(f"Import from {item.line}")
            button.setToolTip(str(item.path))
            button.setAutoDefault(False)
            button.setEnabled(not item.problem)
            button.clicked.connect(lambda _=False, f=item: self.importRequested.emit(f))
            self.import_box.addWidget(button)
            self.import_buttons.append(button)
        if usable:
            self.import_note.setText("Your servers are copied into Portico's own config file.")
        else:
            self.import_note.setText(
                "No MCP settings of Claude Desktop, Claude Code, VS Code or Cursor were found "
                "on this computer."
            )
