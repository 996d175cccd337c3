"""Issue 26, item 13: the Log tab opened at the oldest kept line and drifted once the
2,000-line cap trimmed. It opens at the newest and follows like a terminal; scrolled up,
the lines the person reads stay where they are, trimming included."""

from __future__ import annotations

from PySide6.QtWidgets import QPlainTextEdit
from pytestqt.qtbot import QtBot

from portico.runtime.events import LogLine
from portico.ui.pages.log_lines import LogBook

LIMIT = 200


def _view(qtbot: QtBot) -> QPlainTextEdit:
    view = QPlainTextEdit()
    view.setReadOnly(True)
    view.setMaximumBlockCount(LIMIT)
    view.resize(400, 200)
    qtbot.addWidget(view)
    view.show()
    return view


def _add(book: LogBook, view: QPlainTextEdit, n: int, start: int) -> None:
    for i in range(start, start + n):
        line = LogLine("s", f"line {i}")
        text = book.add(line)
        assert text is not None
        book.append_to(view, line, text)


def _top_line(view: QPlainTextEdit) -> str:
    return view.cursorForPosition(view.viewport().rect().topLeft()).block().text()


def test_the_log_opens_at_the_newest_line_and_follows_past_the_cap(qtbot: QtBot) -> None:
    book = LogBook(limit=LIMIT)
    for i in range(LIMIT + 50):
        book.add(LogLine("s", f"line {i}"))
    view = _view(qtbot)
    book.show(view, "s")
    bar = view.verticalScrollBar()
    assert bar.maximum() > 0 and bar.value() == bar.maximum()
    _add(book, view, 30, LIMIT + 50)
    assert bar.value() == bar.maximum()
    assert view.document().lastBlock().text().endswith(f"line {LIMIT + 79}")


def test_scrolled_up_the_lines_stay_put_while_the_cap_trims(qtbot: QtBot) -> None:
    book = LogBook(limit=LIMIT)
    view = _view(qtbot)
    book.show(view, "s")
    _add(book, view, LIMIT, 0)
    bar = view.verticalScrollBar()
    bar.setValue(bar.maximum() // 2)
    before = _top_line(view)
    _add(book, view, 20, LIMIT)  # each one trims the oldest line
    assert _top_line(view) == before
    assert bar.value() < bar.maximum()
