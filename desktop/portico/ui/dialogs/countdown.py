"""The one countdown the sign-in dialogs share: a label that says how long is left."""

from __future__ import annotations

import time
from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QLabel


def format_remaining(seconds: float) -> str:
    seconds = max(0, int(seconds + 0.999))
    return f"{seconds // 60}:{seconds % 60:02d}"


class Countdown(QObject):
    """Updates ``label`` every second with ``running(left)`` until ``expired`` is said."""

    def __init__(
        self,
        label: QLabel,
        seconds: float,
        running: Callable[[str], str],
        expired: str,
    ) -> None:
        super().__init__(label)
        self.label = label
        self.deadline = time.monotonic() + seconds
        self._running = running
        self._expired = expired
        self._timer = QTimer(self)
        self._timer.setInterval(1000)
        self._timer.timeout.connect(self.tick)
        self._timer.start()
        self.tick()

    def remaining(self) -> float:
        return self.deadline - time.monotonic()

    def tick(self) -> None:
        left = self.remaining()
        if left <= 0:
            self.label.setText(self._expired)
            self._timer.stop()
        else:
            self.label.setText(self._running(format_remaining(left)))
