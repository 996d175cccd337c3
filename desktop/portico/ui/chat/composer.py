"""The chat input: a multi-line editor with history, attachments and completions, and the
row beside it (model picker, YOLO toggle, Send / Stop).

Enter sends, Shift+Enter starts a new line, Up in an empty box walks back through what was
sent, Esc stops a running turn. Pasted images become image attachments (sent to vision
models); pasted or dropped files are attached by path, their chips saying their size (and
when a file is too big to go). ``@`` offers the servers' resources: choosing one adds its
chip, and the resource is read through its server when the message is sent.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QBuffer, QByteArray, QEvent, QIODevice, QMimeData, QSize, Qt, Signal
from PySide6.QtGui import QImage, QKeyEvent, QTextCursor
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from portico.chat.attachments import Probe, size_text
from portico.ui.chat.completion import Completion, CompletionPopup, CompletionSource
from portico.ui.palette import set_tone
from portico.ui.shortcuts import Key, handled_by_widget

_INPUT = "Chats: the message input"
SEND = Key(("Enter",), "Send the message", _INPUT)
NEW_LINE = Key(("Shift+Enter",), "A new line", _INPUT)
STOP = Key(("Esc",), "Stop the answer", _INPUT)
EARLIER = Key(("Up", "Down"), "Your earlier messages (from an empty input)", _INPUT)
PICK = Key(("Tab",), "Take the highlighted completion (/ and @)", _INPUT)
# "/" is typed, not bound: at the start of the input it opens the commands' completions
COMMANDS = Key(("/",), "Commands (at the start; /help lists them)", _INPUT)
handled_by_widget(SEND, NEW_LINE, STOP, EARLIER, PICK, COMMANDS)  # by ChatInput.keyPressEvent

HISTORY_LIMIT = 200
_CALL = re.compile(r"^/call\s+(\S*)$")
_COMMAND = re.compile(r"^/(\S*)$")
_RESOURCE = re.compile(r"(?:^|\s)@(\S*)$")
_PICTURES = {".png", ".jpg", ".jpeg", ".gif", ".webp"}


@dataclass(frozen=True)
class Attachment:
    kind: str  # "image", "file" or "resource"
    name: str
    path: str = ""  # files: attached by path
    data: bytes = b""  # images: PNG bytes
    mime: str = ""
    server: str = ""  # resources: read from this server when sent
    uri: str = ""


def image_attachment(image: QImage, name: str = "pasted image.png") -> Attachment:
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    # The stub says bytes, but PySide6 rejects b"PNG" here at run time and takes a str.
    image.save(buffer, "PNG")  # type: ignore[call-overload]
    return Attachment("image", name, data=bytes(data.data()), mime="image/png")


class ChatInput(QPlainTextEdit):
    submitted = Signal(str)
    stopRequested = Signal()
    attached = Signal(object)  # Attachment
    completionContext = Signal(str, str)  # trigger ("/", "call", "@", ""), typed word

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("message input")
        self.setPlaceholderText("Message, / for commands and prompts, @ for resources")
        self.setTabChangesFocus(True)
        self.setMinimumHeight(44)
        self.setMaximumHeight(160)
        self.history: list[str] = []
        self._history_at: int | None = None
        self.popup: CompletionPopup | None = None
        self.has_attachments: Callable[[], bool] = lambda: False  # sendable without text
        self.textChanged.connect(self._context_changed)
        self.textChanged.connect(self.updateGeometry)  # grows with its lines, up to six

    def sizeHint(self) -> QSize:
        # About three lines: the transcript gets the height, not an empty editor.
        lines = max(1, min(self.document().blockCount(), 6))
        return QSize(400, 16 + self.fontMetrics().lineSpacing() * (lines + 2))

    # --- keys --------------------------------------------------------------------------

    def event(self, event: QEvent) -> bool:
        # Tab changes focus before keyPressEvent sees it; with the popup open it picks.
        if (
            event.type() == QEvent.Type.KeyPress
            and isinstance(event, QKeyEvent)
            and event.key() == Qt.Key.Key_Tab
            and self.popup is not None
            and self.popup.isVisible()
            and self.popup.accept_current()
        ):
            return True
        return super().event(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key = event.key()
        shift = bool(event.modifiers() & Qt.KeyboardModifier.ShiftModifier)
        popup = self.popup
        if popup is not None and popup.isVisible():
            if key in (Qt.Key.Key_Down, Qt.Key.Key_Up):
                popup.move_selection(1 if key == Qt.Key.Key_Down else -1)
                return
            enter = key in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Tab)
            if enter and not shift and popup.accept_current():
                return
            if key == Qt.Key.Key_Escape:
                popup.hide()
                return
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and not shift:
            self.send()
            return
        if key == Qt.Key.Key_Escape:
            self.stopRequested.emit()
            return
        if key == Qt.Key.Key_Up and self._browsing_allowed():
            self._walk_history(-1)
            return
        if key == Qt.Key.Key_Down and self._history_at is not None:
            self._walk_history(1)
            return
        super().keyPressEvent(event)

    def send(self) -> None:
        text = self.toPlainText().strip()
        if not text and not self.has_attachments():
            return
        if text and (not self.history or self.history[-1] != text):
            self.history.append(text)
            del self.history[:-HISTORY_LIMIT]
        self._history_at = None
        self.clear()
        self.submitted.emit(text)

    def _browsing_allowed(self) -> bool:
        return not self.toPlainText() or self._history_at is not None

    def _walk_history(self, step: int) -> None:
        if not self.history:
            return
        at = len(self.history) if self._history_at is None else self._history_at
        at += step
        if at >= len(self.history):
            self._history_at = None
            self._set_text("")
            return
        self._history_at = max(0, at)
        self._set_text(self.history[self._history_at])

    def _set_text(self, text: str) -> None:
        self.blockSignals(True)
        self.setPlainText(text)
        self.blockSignals(False)
        self.moveCursor(QTextCursor.MoveOperation.End)

    # --- completion --------------------------------------------------------------------

    def current_context(self) -> tuple[str, str]:
        cursor = self.textCursor()
        before = self.toPlainText()[: cursor.position()]
        if match := _CALL.match(before):
            return "call", match.group(1)
        if match := _COMMAND.match(before):
            return "/", match.group(1)
        if match := _RESOURCE.search(before):
            return "@", match.group(1)
        return "", ""

    def _context_changed(self) -> None:
        if self._history_at is not None and self.toPlainText() != self.history[self._history_at]:
            self._history_at = None
        trigger, word = self.current_context()
        self.completionContext.emit(trigger, word)

    def complete(self, row: Completion) -> None:
        trigger, word = self.current_context()
        cursor = self.textCursor()
        typed = len(word) + (1 if trigger in ("/", "@") else 0)
        cursor.movePosition(QTextCursor.MoveOperation.Left, QTextCursor.MoveMode.KeepAnchor, typed)
        cursor.insertText(row.insert)
        self.setTextCursor(cursor)

    def remove_typed(self) -> None:
        """Take the typed ``@word`` out (its resource became a chip)."""
        trigger, word = self.current_context()
        if trigger != "@":
            return
        cursor = self.textCursor()
        cursor.movePosition(
            QTextCursor.MoveOperation.Left, QTextCursor.MoveMode.KeepAnchor, len(word) + 1
        )
        cursor.removeSelectedText()
        self.setTextCursor(cursor)

    # --- paste -------------------------------------------------------------------------

    def canInsertFromMimeData(self, source: QMimeData) -> bool:
        return source.hasImage() or source.hasUrls() or super().canInsertFromMimeData(source)

    def insertFromMimeData(self, source: QMimeData) -> None:
        if source.hasImage():
            image = source.imageData()
            if isinstance(image, QImage) and not image.isNull():
                self.attached.emit(image_attachment(image))
                return
        if source.hasUrls():
            files = [u.toLocalFile() for u in source.urls() if u.isLocalFile()]
            if files:
                for path in files:
                    self.attached.emit(Attachment("file", Path(path).name, path=path))
                return
        super().insertFromMimeData(source)


class Composer(QWidget):
    """The input with its popup, attachment chips and the controls row."""

    submitted = Signal(str, list)  # text, [Attachment]
    stopRequested = Signal()
    modelChosen = Signal(str)  # "provider/model"
    yoloToggled = Signal(bool)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("composer")
        self.source: CompletionSource | None = None
        self.attachments: list[Attachment] = []
        # Set by the pane's controller: look at an attached file (size, type) off the GUI
        # thread, then call ``set_probe``.
        self.measure: Callable[[Attachment], None] | None = None
        self.running = False
        self.seeing: set[str] = set()  # the models that take images
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(4)
        self.popup = CompletionPopup(self)
        column.addWidget(self.popup)
        self.chips = QHBoxLayout()
        self.chips.addStretch(1)
        column.addLayout(self.chips)
        self.input = ChatInput()
        self.input.popup = self.popup
        self.input.has_attachments = lambda: bool(self.attachments)
        column.addWidget(self.input)
        self.yolo_warning = QLabel(
            "YOLO is on: tools run without asking you first. Turn it off to approve each call."
        )
        self.yolo_warning.setWordWrap(True)
        self.yolo_warning.setAccessibleName("YOLO warning")
        set_tone(self.yolo_warning, "warning")
        self.yolo_warning.hide()
        column.addWidget(self.yolo_warning)

        row = QHBoxLayout()
        self.attach_button = QToolButton()
        self.attach_button.setText("📎")
        self.attach_button.setAccessibleName("Attach files")
        self.attach_button.setToolTip("Attach files or images (or drop or paste them here)")
        self.attach_button.clicked.connect(self.choose_files)
        row.addWidget(self.attach_button)
        self.model_picker = QComboBox()
        self.model_picker.setAccessibleName("model")
        self.model_picker.setToolTip("The model this chat uses (Ctrl+M)")
        self.model_picker.setMinimumContentsLength(22)
        self.model_picker.activated.connect(self._model_activated)
        row.addWidget(self.model_picker)
        self.yolo = QCheckBox("&YOLO")
        self.yolo.setAccessibleName("YOLO: run tools without asking")
        self.yolo.setToolTip("Run every tool call of this chat without asking first")
        self.yolo.toggled.connect(self._yolo_toggled)
        row.addWidget(self.yolo)
        row.addStretch(1)
        self.status = QLabel()
        self.status.setAccessibleName("turn status")
        set_tone(self.status, "muted")
        row.addWidget(self.status)
        self.stop_button = QPushButton("Stop")
        self.stop_button.setAccessibleName("Stop the answer")
        self.stop_button.setToolTip("Stop (Esc)")
        self.stop_button.setAutoDefault(False)
        self.stop_button.clicked.connect(self.stopRequested)
        self.stop_button.hide()
        row.addWidget(self.stop_button)
        self.send_button = QPushButton("Send")
        self.send_button.setAccessibleName("Send")
        self.send_button.setToolTip("Send (Enter); Shift+Enter for a new line")
        self.send_button.setAutoDefault(False)
        self.send_button.clicked.connect(self.input.send)
        row.addWidget(self.send_button)
        column.addLayout(row)

        self.input.submitted.connect(self._submitted)
        self.input.stopRequested.connect(self._escape)
        self.input.attached.connect(self.attach)
        self.input.completionContext.connect(self._completion_context)
        self.popup.chosen.connect(self._chosen)

    # --- model picker ------------------------------------------------------------------

    def set_models(
        self, models: list[tuple[str, str]], current: str | None, seeing: set[str] | None = None
    ) -> None:
        """``models``: (id "provider/model", label). An empty list shows "No model".
        ``seeing``: the ids of the models that take images."""
        self.seeing = set(seeing or ())
        self.model_picker.blockSignals(True)
        self.model_picker.clear()
        if not models:
            self.model_picker.addItem("No model (direct mode)", "")
        for model_id, label in models:
            self.model_picker.addItem(label, model_id)
        index = self.model_picker.findData(current or "")
        self.model_picker.setCurrentIndex(max(index, 0))
        self.model_picker.blockSignals(False)

    def current_model(self) -> str:
        return str(self.model_picker.currentData() or "")

    def _model_activated(self, _index: int) -> None:
        self.modelChosen.emit(self.current_model())
        self._mark_chips()

    def _yolo_toggled(self, on: bool) -> None:
        self.yolo_warning.setVisible(on)
        self.yoloToggled.emit(on)

    # --- running -------------------------------------------------------------------------

    def set_running(self, running: bool, status: str = "") -> None:
        self.running = running
        self.stop_button.setVisible(running)
        self.send_button.setVisible(not running)
        self.status.setText(status)

    def _escape(self) -> None:
        if self.running:
            self.stopRequested.emit()

    def _submitted(self, text: str) -> None:
        attachments = list(self.attachments)
        self.clear_attachments()
        self.submitted.emit(text, attachments)

    # --- attachments -------------------------------------------------------------------

    def choose_files(self) -> QFileDialog:
        """The file dialog, shown without blocking the loop (``open()``, not ``exec()``)."""
        dialog = QFileDialog(self, "Attach files")
        dialog.setFileMode(QFileDialog.FileMode.ExistingFiles)
        dialog.filesSelected.connect(self.attach_paths)
        dialog.finished.connect(dialog.deleteLater)
        dialog.open()
        return dialog

    def attach_paths(self, paths: list[str]) -> None:
        for path in paths:
            self.attach(Attachment("file", Path(path).name, path=path))

    def attach(self, attachment: Attachment) -> None:
        self.attachments.append(attachment)
        chip = QToolButton()
        chip.setProperty("attachment", attachment)
        chip.setAccessibleName(f"Remove attachment {attachment.name}")
        chip.clicked.connect(lambda _=False, a=attachment, c=chip: self._detach(a, c))
        self.chips.insertWidget(self.chips.count() - 1, chip)
        chip.show()  # now, not on the layout's queued call: Tab and a send find it
        self._mark_chips()
        if attachment.kind == "file" and self.measure is not None:
            self.measure(attachment)

    def set_probe(self, attachment: Attachment, probe: Probe) -> None:
        """What a look at the file found: its chip says the size, or why it cannot go."""
        for chip in self._chips():
            if chip.property("attachment") == attachment:
                chip.setProperty("probe", probe)
        self._mark_chips()

    def _chips(self) -> list[QToolButton]:
        out = []
        for index in range(self.chips.count()):
            item = self.chips.itemAt(index)
            chip = item.widget() if item is not None else None
            if isinstance(chip, QToolButton):
                out.append(chip)
        return out

    def _mark_chips(self) -> None:
        """Each chip's text; an image says so when the chosen model takes no images (the
        send is refused then, with the same words)."""
        model = self.current_model()
        for chip in self._chips():
            a = chip.property("attachment")
            if a.kind == "resource":
                chip.setText(f"🔗 {a.uri} ({a.server})  ✕")
                chip.setToolTip(f"@{a.server}:{a.uri}\nRead from {a.server} when you send")
                continue
            probe = chip.property("probe")
            picture = (
                a.kind == "image"
                or Path(a.name).suffix.lower() in _PICTURES
                or (isinstance(probe, Probe) and probe.mime_type.startswith("image/"))
            )
            size = len(a.data) if a.data else probe.size if isinstance(probe, Probe) else 0
            shown = f" ({size_text(size)})" if size or a.data else ""
            blind = picture and bool(model) and model not in self.seeing
            problem = probe.problem if isinstance(probe, Probe) else ""
            note = f" — {problem}" if problem else " — this model takes no images" if blind else ""
            chip.setText(f"{'🖼' if picture else '📄'} {a.name}{shown}{note}  ✕")
            tip = a.path or a.name
            if problem:
                tip += f"\n{a.name} cannot be sent: {problem}. Remove it."
            elif blind:
                tip += "\nThe chosen model takes no images: pick a vision model."
            chip.setToolTip(tip)
            if problem or blind:
                set_tone(chip, "warning")

    def _detach(self, attachment: Attachment, chip: QToolButton) -> None:
        if attachment in self.attachments:
            self.attachments.remove(attachment)
        chip.deleteLater()

    def clear_attachments(self) -> None:
        self.attachments.clear()
        while self.chips.count() > 1:
            item = self.chips.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.deleteLater()

    # --- completion --------------------------------------------------------------------

    def _chosen(self, row: Completion) -> None:
        """A resource becomes a chip (its typed ``@word`` goes); anything else is text."""
        if row.target is None:
            self.input.complete(row)
            return
        self.input.remove_typed()
        server, uri = row.target
        chosen = Attachment("resource", uri, server=server, uri=uri)
        if chosen not in self.attachments:
            self.attach(chosen)

    def _completion_context(self, trigger: str, word: str) -> None:
        if not trigger or self.source is None:
            self.popup.hide()
            return
        self.popup.offer(list(self.source(trigger, word)), word)

    def refresh_completions(self) -> None:
        """A source that answered late (resources fetched) asks for another look."""
        trigger, word = self.input.current_context()
        self._completion_context(trigger, word)
