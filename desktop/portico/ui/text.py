"""Text from a config file or a server, as a Qt widget shows it.

Every such text goes through :func:`portico.text.visible` (a bidi override, an escape
sequence, a zero-width character is shown as a visible escape, never obeyed), and never
reaches Qt's rich-text engine unescaped: a ``QLabel``, a tooltip and a form row's label
guess the format (``Qt.AutoText``), so ``<b>``, ``<a href>`` or ``<img>`` in a tool
description would otherwise render as markup, a link or a fake line of the dialog.

- :func:`plain` for a plain-text widget (``QPlainTextEdit``, a list item, a label set to
  ``Qt.PlainText``), :func:`rich` for a piece of HTML the code composes;
- :func:`plain_label` / :func:`set_plain` make a label plain text and fill it;
- :func:`tip` for a tooltip, which has no plain-text switch.
"""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel

from portico.text import visible


def plain(text: object, *, multiline: bool = False) -> str:
    """``text`` for a plain-text widget: every control, bidi and invisible character shown."""
    return visible(str(text), multiline=multiline)


def rich(text: object, *, multiline: bool = True) -> str:
    """``text`` for a place inside HTML the code composes: sanitized, then HTML-escaped.

    Line feeds stay by default (a ``pre-wrap`` block shows them, elsewhere they are
    spaces); a carriage return never does.
    """
    return html.escape(visible(str(text), multiline=multiline))


def tip(text: object) -> str:
    """A tooltip showing ``text`` as it is. Qt guesses a tooltip's format from a tag in
    it, so text with a ``<`` is sent as escaped rich text (line feeds as line breaks)."""
    shown = plain(text, multiline=True)
    if "<" not in shown:
        return shown
    return "<qt>" + html.escape(shown).replace("\n", "<br>") + "</qt>"


def set_plain(label: QLabel, text: object, *, multiline: bool = False) -> None:
    """Fill ``label`` with ``text`` as plain text (never rendered as markup)."""
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setText(plain(text, multiline=multiline))


def plain_label(text: object = "", *, multiline: bool = False, wrap: bool = True) -> QLabel:
    """A new label showing ``text`` as plain text."""
    label = QLabel()
    set_plain(label, text, multiline=multiline)
    label.setWordWrap(wrap)
    return label
