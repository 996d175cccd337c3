"""Keyboard shortcuts, each described where it is bound, so F1 can list them all.

A shortcut is a ``QAction`` (its text says what it does) or a ``QShortcut`` made by
:func:`bind` (which writes what it does and where it works on it). Keys a widget handles
itself (Enter in the message input) are :class:`Key` constants in that widget's module,
named in :data:`WIDGET_KEYS` by the module. :func:`collect` reads all of them from a
live window: the F1 list is never a second, hand-kept copy.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from PySide6.QtCore import QKeyCombination, QObject, Qt
from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtWidgets import QAbstractButton

WHERE = "portico_where"  # the property naming where a shortcut works
WIDGET_KEYS: list[Key] = []  # keys widgets handle themselves, as their modules say


def handled_by_widget(*keys: Key) -> None:
    """Name keys a widget's own key handling answers (listed with the shortcuts)."""
    WIDGET_KEYS.extend(k for k in keys if k not in WIDGET_KEYS)


@dataclass(frozen=True)
class Key:
    """A key (or keys: "Enter", "F3") that does ``what`` in ``where``."""

    keys: tuple[str, ...]
    what: str
    where: str

    def matches(self, pressed: QKeyCombination) -> bool:
        """Whether a key press is one of these keys (Return and the keypad's Enter alike)."""
        return _plain(pressed) in {_plain(QKeySequence(k)[0]) for k in self.keys}  # type: ignore[index]


@dataclass(frozen=True)
class Row:
    """One line of the F1 list."""

    keys: str  # as the platform writes them ("Ctrl+Shift+F")
    what: str
    where: str


def bind(
    parent: QObject,
    key: Key,
    slot: Callable[[], object],
    context: Qt.ShortcutContext = Qt.ShortcutContext.WindowShortcut,
) -> list[QShortcut]:
    """A ``QShortcut`` for each of ``key``'s keys on ``parent``, carrying its description."""
    made = []
    for text in key.keys:
        shortcut = QShortcut(QKeySequence(text), parent)
        shortcut.setContext(context)
        shortcut.setWhatsThis(key.what)
        shortcut.setProperty(WHERE, key.where)
        shortcut.activated.connect(slot)
        made.append(shortcut)
    return made


def describe(action: QAction, where: str) -> None:
    """Say where ``action``'s shortcut works (its text says what it does)."""
    action.setProperty(WHERE, where)


def _plain(combination: QKeyCombination) -> tuple[int, int]:
    # As numbers: PySide6's flag values do not hash alike when made differently.
    key = combination.key()
    modifiers = combination.keyboardModifiers().value & ~Qt.KeyboardModifier.KeypadModifier.value
    return (Qt.Key.Key_Enter if key == Qt.Key.Key_Return else key).value, modifiers


def _native(sequence: QKeySequence) -> str:
    return sequence.toString(QKeySequence.SequenceFormat.NativeText)


def collect(root: QObject, widget_keys: Iterable[Key] | None = None) -> list[Row]:
    """Every shortcut bound under ``root`` (QActions and QShortcuts with their
    descriptions) and the widgets' own ``widget_keys``, sorted by place and keys; the
    keys that do one thing in one place share a row."""
    rows: dict[tuple[str, str], list[str]] = {}  # (where, what) -> its keys

    def add(keys: str, what: str, where: str) -> None:
        if keys and what:
            known = rows.setdefault((where, what), [])
            known += [k for k in keys.split(", ") if k not in known]

    for action in root.findChildren(QAction):
        where = action.property(WHERE) or "Everywhere"
        what = action.text().replace("&&", "\0").replace("&", "").replace("\0", "&")
        what = what.removesuffix("…")
        keys = ", ".join(_native(s) for s in action.shortcuts() if not s.isEmpty())
        add(keys, what, str(where))
    for shortcut in root.findChildren(QShortcut):
        add(_native(shortcut.key()), shortcut.whatsThis(), str(shortcut.property(WHERE) or ""))
    for button in root.findChildren(QAbstractButton):
        keys = _native(button.shortcut())
        mnemonic = "&" in button.text() and keys.startswith("Alt+")
        if keys and not mnemonic:
            add(keys, button.accessibleName() or button.text(), str(button.property(WHERE) or ""))
    for key in WIDGET_KEYS if widget_keys is None else widget_keys:
        add(", ".join(_native(QKeySequence(k)) for k in key.keys), key.what, key.where)
    out = [Row(", ".join(keys), what, where) for (where, what), keys in rows.items()]
    return sorted(out, key=lambda r: (r.where != "Everywhere", r.where, r.keys.lower(), r.what))
