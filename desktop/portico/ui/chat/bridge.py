"""Chat events -> the GUI thread, through one queued signal (like ui/bridge.py)."""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt, Signal


class ChatBridge(QObject):
    # Not named `event`: that would shadow QObject.event(), the virtual event handler.
    delivered = Signal(str, object)  # conversation id, event (on the GUI thread)
    _crossed = Signal(str, object)  # emitted on the runtime thread

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._crossed.connect(self._deliver, Qt.ConnectionType.QueuedConnection)

    def post(self, conversation_id: str, event: object) -> None:
        """Safe from any thread (the chat service's emit function)."""
        self._crossed.emit(conversation_id, event)

    def _deliver(self, conversation_id: str, event: object) -> None:
        self.delivered.emit(conversation_id, event)
