"""Text typed in an editor form and not applied yet (the field still has focus).

A form applies a line when it loses focus (``editingFinished``); until then the typed
text is the person's edit all the same: Save is enabled, an outside reload asks first,
closing asks to save. :class:`TypedLines` remembers what each watched line showed when
the form was filled and says which differ now.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QAbstractSpinBox, QLineEdit


class TypedLines(QObject):
    typing = Signal()  # a watched line was typed in

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._shown: dict[QLineEdit, str] = {}
        self._finish: dict[QLineEdit, QLineEdit | QAbstractSpinBox] = {}

    def watch(self, widget: QLineEdit | QAbstractSpinBox) -> None:
        """Follow a line (or a spin box's line); call again after each fill."""
        line = widget if isinstance(widget, QLineEdit) else widget.lineEdit()
        if line is None:
            return
        if line not in self._shown:
            line.textEdited.connect(lambda _text: self.typing.emit())
        self._shown[line] = line.text()
        self._finish[line] = widget

    def forget(self) -> None:
        self._shown.clear()
        self._finish.clear()

    def refilled(self) -> None:
        """The form was filled again: what each line shows now is the file's value."""
        for line in list(self._shown):
            try:
                self._shown[line] = line.text()
            except RuntimeError:  # its widget was deleted with a row
                del self._shown[line]
                self._finish.pop(line, None)

    @property
    def pending(self) -> bool:
        return any(self._typed())

    def _typed(self) -> list[QLineEdit]:
        out = []
        for line, shown in list(self._shown.items()):
            try:
                if line.text() != shown:
                    out.append(line)
            except RuntimeError:
                del self._shown[line]
                self._finish.pop(line, None)
        return out

    def apply(self) -> None:
        """Apply every typed line, as leaving it would."""
        for line in self._typed():
            self._finish[line].editingFinished.emit()
