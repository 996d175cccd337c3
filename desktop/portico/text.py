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
    keep = "\n\t" if multiline else ""
    # Every character _SUSPECT matches is non-printable: text that is printable (its line
    # feeds and tabs aside) needs no work, so a long tool result costs one C-level scan.
    if _printable(text, keep):
        return text
    shown = _SUSPECT.sub(lambda m: m.group() if m.group() in keep else _shown(m.group()), text)
    if _printable(shown, keep):
        return shown
    return "".join(
        _shown(char)
        if char not in keep
        and not char.isprintable()
        and unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp")
        else char
        for char in shown
    )


def _printable(text: str, keep: str) -> bool:
    for char in keep:
        text = text.replace(char, "")
    return text.isprintable()
