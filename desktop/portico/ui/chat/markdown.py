"""Markdown -> blocks of Qt rich text (the subset QTextDocument renders), no web engine.

A message is split into top-level blocks: prose (headings, paragraphs, lists, tables,
quotes) becomes one HTML fragment per block; a fenced or indented code block becomes a
:class:`CodeBlock` (its source for Copy, Pygments-highlighted HTML for display). While an
answer streams, :class:`StreamSplitter` freezes every block but the last, so each frame
re-renders only the tail, not the whole answer.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # markdown_it loads with the first message, not with the window
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

MAX_LINE = 1000  # Qt lays out one long unbroken line in quadratic time: break it


@dataclass(frozen=True)
class ProseBlock:
    html: str
    source: str


@dataclass(frozen=True)
class CodeBlock:
    code: str
    language: str
    html: str
    source: str


Block = ProseBlock | CodeBlock


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    # Links: Qt draws <a>; the view opens them in the system browser (never inside the app).
    return md


def _break_long_lines(text: str) -> str:
    if len(text) <= MAX_LINE:
        return text
    out = []
    for line in text.split("\n"):
        while len(line) > MAX_LINE:
            out.append(line[:MAX_LINE])
            line = line[MAX_LINE:]
        out.append(line)
    return "\n".join(out)


@lru_cache(maxsize=512)
def highlight(code: str, language: str) -> str:
    """Code as ``<pre>`` with inline colours (Qt's rich text has no CSS classes)."""
    from pygments import highlight as pyg_highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import get_lexer_by_name
    from pygments.util import ClassNotFound

    code = _break_long_lines(code.rstrip("\n"))
    try:
        lexer = get_lexer_by_name(language) if language else None
    except ClassNotFound:
        lexer = None
    if lexer is None:
        return f"<pre>{html.escape(code)}</pre>"
    formatter = HtmlFormatter(noclasses=True, nowrap=True, style=_style())
    return f"<pre>{pyg_highlight(code, lexer, formatter).rstrip()}</pre>"


_STYLE = ["default"]


def set_dark(dark: bool) -> None:
    """Pick a highlighting style that reads on the palette (called when it changes)."""
    _STYLE[0] = "monokai" if dark else "default"
    highlight.cache_clear()


def _style() -> str:
    return _STYLE[0]


def _line_offsets(text: str) -> list[int]:
    offsets = [0]
    for i, ch in enumerate(text):
        if ch == "\n":
            offsets.append(i + 1)
    offsets.append(len(text))
    return offsets


def _top_level_ranges(tokens: list[Token]) -> list[tuple[int, int, list[Token]]]:
    """(start line, end line, tokens) of each top-level block."""
    ranges: list[tuple[int, int, list[Token]]] = []
    current: list[Token] = []
    start = 0
    for token in tokens:
        if token.level == 0 and token.nesting >= 0 and not current:
            start = token.map[0] if token.map else start
        current.append(token)
        if token.level == 0 and token.nesting <= 0:
            end = _block_end(current)
            ranges.append((start, end, current))
            current = []
    if current:
        ranges.append((start, _block_end(current), current))
    return ranges


def _block_end(tokens: list[Token]) -> int:
    for token in tokens:
        if token.map:
            return token.map[1]
    return 0


def parse_blocks(text: str) -> list[Block]:
    """Every top-level block of ``text``, in order (remembered for the last few hundred
    texts: a message scrolled out and back, or shown again by Select text, costs no
    parsing)."""
    return list(_parsed(text))


@lru_cache(maxsize=512)
def _parsed(text: str) -> tuple[Block, ...]:
    return tuple(block for block, _end in _blocks_with_ends(text))


def _blocks_with_ends(text: str) -> list[tuple[Block, int]]:
    md = _parser()
    tokens = md.parse(text)
    offsets = _line_offsets(text)
    out: list[tuple[Block, int]] = []
    for start, end, group in _top_level_ranges(tokens):
        a = offsets[min(start, len(offsets) - 1)]
        b = offsets[min(end, len(offsets) - 1)]
        source = text[a:b]
        first = group[0]
        if first.type in ("fence", "code_block"):
            language = (first.info or "").strip().split(" ")[0] if first.type == "fence" else ""
            out.append(
                (CodeBlock(first.content, language, highlight(first.content, language), source), b)
            )
        else:
            rendered = md.renderer.render(group, md.options, {})
            out.append((ProseBlock(_qt_html(rendered), source), b))
    return out


def _qt_html(rendered: str) -> str:
    """Tweak markdown-it's HTML for Qt: bordered tables, tinted inline code."""
    rendered = rendered.replace(
        "<table>",
        "<table border='1' cellspacing='0' cellpadding='4' style='border-collapse:collapse'>",
    )
    rendered = rendered.replace("<code>", "<code style='background-color:rgba(127,127,127,0.18)'>")
    return _break_long_lines(rendered.strip())


class StreamSplitter:
    """Blocks of a growing text: every block but the last is frozen once complete.

    ``update(text)`` returns (new frozen blocks, tail blocks). Only ``text[frozen:]`` is
    parsed each time, so a 4,000-token answer costs the same per frame at the end as at
    the start. A block is frozen only when another block follows it and it is not
    inside an open code fence (markdown-it already closes a fence at the end of input,
    so the fence is simply the last block until its closing line arrives).
    """

    def __init__(self) -> None:
        self.frozen_upto = 0
        self.frozen: list[Block] = []

    def update(self, text: str) -> tuple[list[Block], list[Block]]:
        tail_text = text[self.frozen_upto :]
        parts = _blocks_with_ends(tail_text)
        newly: list[Block] = []
        # Freeze all but the last block, but only where a blank line ends the block:
        # a paragraph or list still growing must stay live.
        while len(parts) > 1:
            block, end = parts[0]
            if not tail_text[:end].endswith("\n"):
                break
            newly.append(block)
            self.frozen.append(block)
            self.frozen_upto += end
            tail_text = tail_text[end:]
            parts = [(b, e - end) for b, e in parts[1:]]
        return newly, [b for b, _e in parts]


def warm_up() -> None:
    """Import markdown-it and Pygments (~100+ ms) off the GUI thread, before the first
    message needs them (the window opens without them)."""
    parse_blocks("# a\n\n- b `c`\n\n```python\nx = 1\n```\n")


def to_plain(text: str) -> str:
    """A message's Markdown as the plain text a reader sees (Copy): no emphasis marks,
    links as their words, list items with a "- " or "1. ", code blocks as their code,
    table cells separated by tabs."""
    tokens = _parser().parse(text)
    out: list[tuple[str, str]] = []  # finished blocks: (text, "list" | "table" | "")
    line: list[str] = []
    prefixes: list[str] = []  # the open lists' markers ("- " or an ordered counter)
    counters: list[int] = []
    row: list[str] = []
    for token in tokens:
        kind = token.type
        if kind == "bullet_list_open":
            prefixes.append("- ")
            counters.append(0)
        elif kind == "ordered_list_open":
            prefixes.append("#")
            counters.append(int(token.attrs.get("start", 1) or 1) - 1)
        elif kind in ("bullet_list_close", "ordered_list_close"):
            prefixes.pop()
            counters.pop()
        elif kind == "list_item_open":
            counters[-1] += 1
            marker = f"{counters[-1]}. " if prefixes[-1] == "#" else "- "
            line.append("  " * (len(prefixes) - 1) + marker)
        elif kind == "inline":
            line.append(_inline_plain(token))
        elif kind in ("fence", "code_block"):
            out.append((token.content.rstrip("\n"), ""))
        elif kind in ("th_open", "td_open"):
            line = []
        elif kind in ("th_close", "td_close"):
            row.append("".join(line))
            line = []
        elif kind == "tr_close":
            out.append(("\t".join(row), "table"))
            row = []
        elif kind == "hr":
            out.append(("---", ""))
        elif kind in ("paragraph_close", "heading_close") and line:
            out.append(("".join(line), "list" if prefixes else ""))
            line = []
    if line:
        out.append(("".join(line), ""))
    joined = ""
    for index, (block, group) in enumerate(out):
        if index:  # list items and table rows one a line, other blocks a blank line apart
            joined += "\n" if group and group == out[index - 1][1] else "\n\n"
        joined += block
    return joined


def _inline_plain(token: Token) -> str:
    parts: list[str] = []
    for child in token.children or []:
        if child.type in ("text", "code_inline"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append("\n")
        elif child.type == "image":
            parts.append(child.content)
    return "".join(parts)
