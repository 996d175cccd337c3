"""The "Start at Login" menu item: a checkable action over the platform's login item."""

from __future__ import annotations

import logging
from collections.abc import Callable

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QWidget

from portico.prompts import Notice
from portico.ui.autostart import LoginItem, login_item

log = logging.getLogger(__name__)


class StartAtLoginAction(QAction):
    def __init__(
        self,
        parent: QWidget,
        item: LoginItem | None = None,
        notify: Callable[[Notice], None] | None = None,
    ) -> None:
        super().__init__("Start at &Login (in the Tray)", parent)
        self.item = item or login_item()
        self._notify = notify
        self.setCheckable(True)
        self.setToolTip("Start Portico in the system tray when you log in.")
        self.setChecked(self.item.enabled())
        self.toggled.connect(self._toggled)
        # the desktop's own settings may change it: read it back whenever a menu opens
        self.hovered.connect(self.sync)

    def sync(self) -> None:
        actual = self.item.enabled()
        if actual != self.isChecked():
            self.blockSignals(True)
            self.setChecked(actual)
            self.blockSignals(False)

    def _toggled(self, on: bool) -> None:
        try:
            self.item.set_enabled(on)
        except OSError as exc:
            log.warning("start at login could not be changed: %s", exc)
            if self._notify is not None:
                self._notify(Notice("error", f"Start at login could not be changed: {exc}"))
        self.sync()
