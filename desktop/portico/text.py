"""One sanitizer for every text from a config file or a server that reaches a person.

A terminal obeys what it prints: a carriage return, an escape sequence or a cursor
movement inside a server's tool description or a config's argument can rewrite the lines
above it (a review, an approval header); a bidi override reorders what a label shows;
zero-width characters hide. :func:`visible` shows each such character as a visible
escape (``\\x1b``, ``\\r``, ``<U+202E>``): never passed through, never dropped silently.
"""

from __future__ import annotations

import re
import unicodedata

_NAMED = {"\r": "\\r", "\t": "\\t", "\n": "\\n", "\x1b": "\\x1b", "\x08": "\\b", "\x7f": "\\x7f"}

# C0 and C1 controls and DEL, bidi marks, overrides and isolates, zero-width and other
# invisible format characters, line/paragraph separators, tag characters.
_SUSPECT = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\U000e0000-\U000e007f]"
)


def _shown(char: str) -> str:
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"<U+{code:04X}>"


def visible(text: str, *, multiline: bool = False) -> str:
    """``text`` with every control, bidi and invisible format character shown visibly.

    ``multiline``: line feeds and tabs stay (the field shows several lines); a carriage
    return never does.
    """
    if not _SUSPECT.search(text) and text.isprintable():
        return text
    out: list[str] = []
    for char in text:
        if char in "\n\t" and multiline:
            out.append(char)
        elif _SUSPECT.match(char) or (
            not char.isprintable() and unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp")
        ):
            out.append(_shown(char))
        else:
            out.append(char)
    return "".join(out)
