"""Find in chat's marks: every occurrence of the query in a piece of rich text wrapped
in a highlight, the current one in a stronger colour."""

from __future__ import annotations

import html
import re

MARK = "background-color:#ffe27a;color:#000"
CURRENT = "background-color:#ff9632;color:#000"
_TAG = re.compile(r"(<[^>]*>)")


def count(text: str, query: str) -> int:
    return text.casefold().count(query.casefold()) if query else 0


def mark_html(rich: str, query: str, current: int | None, start: int = 0) -> tuple[str, int]:
    """``rich`` with every occurrence of ``query`` outside tags marked; occurrence number
    ``current`` (numbered from ``start``) marked as the current one. Returns the marked
    HTML and how many occurrences it held."""
    needle = re.compile(re.escape(html.escape(query, quote=False)), re.IGNORECASE)
    seen = start
    out = []
    for piece in _TAG.split(rich):
        if piece.startswith("<"):
            out.append(piece)
            continue

        def wrap(match: re.Match[str]) -> str:
            nonlocal seen
            style = CURRENT if seen == current else MARK
            seen += 1
            return f"<span style='{style}'>{match.group(0)}</span>"

        out.append(needle.sub(wrap, piece))
    return "".join(out), seen - start
