"""The lines of the Log tab: kept per server as the hub's LogLine events, shown with their
time, their stream and (for the server's own log notifications) their level.

A failure note of ours quotes the server's last stderr lines; those lines are already in
the log just above it, so the note is shown without them (each attempt's stderr once).
"""

from __future__ import annotations

import time
from collections import deque

from PySide6.QtWidgets import QPlainTextEdit

from portico.runtime.events import LogLine
from portico.ui.text import plain

LOG_LIMIT = 2000  # lines kept per server in the window
RECENT_STDERR = 200  # stderr lines a failure note is compared with

# MCP log levels (RFC 5424 order); a filter shows a level and everything more severe.
LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


def level_rank(level: str) -> int:
    try:
        return LEVELS.index(level.lower())
    except ValueError:
        return -1  # no level (stderr, our own lines): always shown


def clock(stamp: float) -> str:
    local = time.localtime(stamp)
    return time.strftime("%H:%M:%S", local) + f".{int(stamp % 1 * 1000):03d}"


class LogBook:
    """Every server's recent log lines (bounded) and how they read."""

    def __init__(self, limit: int = LOG_LIMIT) -> None:
        self.limit = limit
        self._lines: dict[str, deque[tuple[LogLine, str]]] = {}
        self._stderr: dict[str, deque[str]] = {}
        self.min_level = ""  # "" shows every level

    def add(self, line: LogLine) -> str | None:
        """Keep ``line``; returns its text as shown, or None when it adds nothing new."""
        text = self._text(line)
        if text is None:
            return None
        self._lines.setdefault(line.server, deque(maxlen=self.limit)).append((line, text))
        if line.stream == "stderr":
            self._stderr.setdefault(line.server, deque(maxlen=RECENT_STDERR)).append(line.text)
        return text

    def _text(self, line: LogLine) -> str | None:
        # A server's line is one line as shown: a CR, a line feed or an escape in it is
        # made visible, so it can neither rewrite nor forge the lines around it.
        stamp = clock(line.time)
        if line.stream == "stderr":
            return f"{stamp}  {plain(line.text)}"
        if line.stream == "mcp":
            level = plain(line.level or "info")
            return f"{stamp}  [{level}] {plain(line.text)}"
        body = self._without_quoted_stderr(line)
        return f"{stamp}  [portico] {plain(body, multiline=True)}"

    def _without_quoted_stderr(self, line: LogLine) -> str:
        first, *rest = line.text.split("\n")
        if not rest:
            return first
        recent = set(self._stderr.get(line.server, ()))
        kept = [r for r in rest if r not in recent]
        if len(kept) == len(rest):
            return line.text
        if first.endswith(":") and not kept:
            first = first[:-1]
        head = first.replace("; last stderr lines:", "").replace("; last stderr lines", "")
        return "\n".join([head + " (its stderr is above)", *kept])

    def lines(self, server: str | None) -> list[tuple[LogLine, str]]:
        return list(self._lines.get(server, ())) if server else []

    def visible(self, line: LogLine) -> bool:
        if not self.min_level or line.stream != "mcp":
            return True
        return level_rank(line.level or "info") >= level_rank(self.min_level)

    def show(self, view: QPlainTextEdit, server: str | None) -> None:
        """The server's lines, opened at the newest and following, like a terminal."""
        view.setPlainText("\n".join(t for line, t in self.lines(server) if self.visible(line)))
        bar = view.verticalScrollBar()
        bar.setValue(bar.maximum())

    def append_to(self, view: QPlainTextEdit, line: LogLine, text: str) -> None:
        """Follow the end while the person is there; scrolled up, the lines they read stay
        put (Qt keeps them when the cap trims the oldest line)."""
        if not self.visible(line):
            return
        bar = view.verticalScrollBar()
        following = bar.value() >= bar.maximum()
        view.appendPlainText(text)
        if following:
            bar.setValue(bar.maximum())
