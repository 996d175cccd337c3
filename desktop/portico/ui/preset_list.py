"""The list of server presets, as both add-server flows (the welcome's and the config
editor's) show it: one row a preset, its name in the UserRole."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QListWidget, QListWidgetItem, QWidget

from portico.config.presets import PRESET_INFO


def preset_list(parent: QWidget | None = None) -> QListWidget:
    view = QListWidget(parent)
    view.setAccessibleName("presets")
    for name, info in PRESET_INFO.items():
        item = QListWidgetItem(f"{name} — {info.description}\n    needs {info.requires}")
        item.setData(Qt.ItemDataRole.UserRole, name)
        view.addItem(item)
    return view
