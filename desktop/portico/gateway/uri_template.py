"""Does a URI match a resource template (RFC 6570, the forms servers use)?"""

from __future__ import annotations

import re
from functools import lru_cache

_EXPR = re.compile(r"\{([+#./;?&]?)([^}]*)\}")


@lru_cache(maxsize=512)
def _pattern(template: str) -> re.Pattern[str]:
    out: list[str] = []
    pos = 0
    for match in _EXPR.finditer(template):
        out.append(re.escape(template[pos : match.start()]))
        op = match.group(1)
        if op in ("+", "#"):
            out.append(r"[^?#]*" if op == "+" else r"(#.*)?")
        elif op in ("?", "&"):
            out.append(r"([?&][^#]*)?")
        elif op in (".", "/", ";"):
            out.append(r"(" + re.escape(op) + r"[^/?#]*)*")
        else:
            out.append(r"[^/?#]+")
        pos = match.end()
    out.append(re.escape(template[pos:]))
    return re.compile("".join(out))


def matches(template: str, uri: str) -> bool:
    return _pattern(template).fullmatch(uri) is not None
