"""Replay a library's edit onto the original text, so unrelated lines stay byte for byte.

A round-trip library re-emits the whole file; where it cannot reproduce a line exactly
(an indentation style it does not keep, a comment column it moves), a plain dump would
change lines nobody edited. ``replay(original, base, edited)`` takes ``base`` (the
library's dump of the unedited tree) and ``edited`` (its dump after the edit) and applies
only their difference to ``original``. When ``base == original`` this is just ``edited``.
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher

_LINE = re.compile(r"[^\n]*\n|[^\n]+$")


def lines_of(text: str) -> list[str]:
    """``text`` split after each "\\n" only (``str.splitlines`` also splits at \\x85,
    \\u2028 and others, which config files may hold inside a string)."""
    return _LINE.findall(text)


def replay(original: str, base: str, edited: str) -> str:
    if original == base:
        return edited
    orig = lines_of(original)
    old = lines_of(base)
    new = lines_of(edited)
    # base line boundary -> original line boundary, where the two agree
    anchor: dict[int, int] = {0: 0, len(old): len(orig)}
    for block in SequenceMatcher(None, orig, old, autojunk=False).get_matching_blocks():
        for step in range(block.size + 1):
            anchor.setdefault(block.b + step, block.a + step)
    edits: list[list[int]] = []
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        # widen to boundaries that exist in the original (the widened lines are equal in
        # base and edited, so base and edited move together)
        while i1 not in anchor:
            i1 -= 1
            j1 -= 1
        while i2 not in anchor:
            i2 += 1
            j2 += 1
        if edits and i1 <= edits[-1][1]:
            edits[-1][1] = max(edits[-1][1], i2)
            edits[-1][3] = max(edits[-1][3], j2)
        else:
            edits.append([i1, i2, j1, j2])
    out: list[str] = []
    at = 0
    for i1, i2, j1, j2 in edits:
        out.extend(orig[anchor[at] : anchor[i1]])
        out.extend(new[j1:j2])
        at = i2
    out.extend(orig[anchor[at] :])
    return "".join(out)
