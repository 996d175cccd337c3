"""Syntax highlighting of mcp.toml and config.yaml: keys, strings, comments, tables."""

from __future__ import annotations

import re

from PySide6.QtGui import (
    QColor,
    QFont,
    QPalette,
    QSyntaxHighlighter,
    QTextCharFormat,
    QTextDocument,
)
from PySide6.QtWidgets import QApplication

from portico.config.model import Dialect

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"?|\'[^\']*\'?')
_NUMBER = re.compile(
    r"(?<![\w.-])(?:[-+]?\d[\d_]*(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null)(?![\w.-])"
)
_TOML_TABLE = re.compile(r"^\s*\[\[?[^\]]*\]\]?")
_TOML_KEY = re.compile(r"([A-Za-z0-9_\-.\"']+)\s*=")
_YAML_KEY = re.compile(r"^(\s*(?:-\s+)?)([^\s#:\-\[{][^:#]*?|\"[^\"]*\"|'[^']*')\s*:(?=\s|$)")
_YAML_FLOW_KEY = re.compile(r"(?<=[{,])\s*([A-Za-z0-9_\-]+)\s*:(?=\s)")


def _fmt(color: str, *, bold: bool = False, italic: bool = False) -> QTextCharFormat:
    fmt = QTextCharFormat()
    fmt.setForeground(QColor(color))
    if bold:
        fmt.setFontWeight(QFont.Weight.Bold)
    fmt.setFontItalic(italic)
    return fmt


def _dark() -> bool:
    app = QApplication.instance()
    if not isinstance(app, QApplication):
        return False
    return app.palette().color(QPalette.ColorRole.Base).lightness() < 128


class ConfigHighlighter(QSyntaxHighlighter):
    """Colours one dialect; ``formats`` names the formats so tests can check a span."""

    def __init__(self, document: QTextDocument, dialect: Dialect) -> None:
        super().__init__(document)
        self.dialect = dialect
        dark = _dark()
        self.formats = {
            "key": _fmt("#7cc4ff" if dark else "#1f4e9c"),
            "table": _fmt("#e0a0ff" if dark else "#7a1fa2", bold=True),
            "string": _fmt("#a5d6a7" if dark else "#2e7d32"),
            "number": _fmt("#ffcc80" if dark else "#b35c00"),
            "comment": _fmt("#9e9e9e" if dark else "#757575", italic=True),
        }

    def highlightBlock(self, text: str) -> None:
        strings = [(m.start(), m.end()) for m in _STRING.finditer(text)]
        comment_at = self._comment_start(text, strings)
        code = text if comment_at is None else text[:comment_at]
        for match in _NUMBER.finditer(code):
            self.setFormat(match.start(), match.end() - match.start(), self.formats["number"])
        if self.dialect is Dialect.TOML:
            table = _TOML_TABLE.match(code)
            if table:
                self.setFormat(0, table.end(), self.formats["table"])
            for match in _TOML_KEY.finditer(code):
                if not _inside(match.start(1), strings):
                    self.setFormat(match.start(1), len(match.group(1)), self.formats["key"])
        else:
            key = _YAML_KEY.match(code)
            if key:
                # Top-level keys are the "tables" of YAML.
                kind = "table" if not key.group(1) else "key"
                self.setFormat(key.start(2), len(key.group(2)), self.formats[kind])
            for match in _YAML_FLOW_KEY.finditer(code):
                if not _inside(match.start(1), strings):
                    self.setFormat(match.start(1), len(match.group(1)), self.formats["key"])
        for start, end in strings:
            if comment_at is None or start < comment_at:
                self.setFormat(start, end - start, self.formats["string"])
        if comment_at is not None:
            self.setFormat(comment_at, len(text) - comment_at, self.formats["comment"])

    def _comment_start(self, text: str, strings: list[tuple[int, int]]) -> int | None:
        for index, char in enumerate(text):
            if char != "#" or _inside(index, strings):
                continue
            if self.dialect is Dialect.YAML and index > 0 and not text[index - 1].isspace():
                continue
            return index
        return None


def _inside(index: int, spans: list[tuple[int, int]]) -> bool:
    return any(start <= index < end for start, end in spans)
