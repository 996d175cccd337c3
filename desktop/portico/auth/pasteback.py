"""Parse a redirect the person pasted: the full URL, ``?code=…&state=…`` or ``code=…&state=…``."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from urllib.parse import parse_qs, urlparse


class PasteError(ValueError):
    """The pasted text is not a usable redirect; the message says why (never the code)."""


@dataclass(frozen=True)
class Redirect:
    code: str
    state: str | None
    iss: str | None

    def __repr__(self) -> str:  # never show the code
        return f"Redirect(code=<{len(self.code)} chars>, state=<hidden>, iss={self.iss!r})"


def _query_of(text: str) -> str:
    text = text.strip().strip("'\"<>")
    if not text:
        raise PasteError("nothing was pasted")
    if "://" in text:
        parts = urlparse(text)
        # Some providers put the response in the fragment; accept it there too.
        return parts.query or parts.fragment
    if text.startswith("?") or text.startswith("#"):
        return text[1:]
    if "?" in text:  # a URL without a scheme, e.g. 127.0.0.1:19876/mcp/oauth/callback?code=…
        return text.split("?", 1)[1]
    return text


def parse_redirect(text: str, expected_state: str | None = None) -> Redirect:
    """The code, state and iss of a pasted redirect; raise ``PasteError`` otherwise.

    ``state`` must equal ``expected_state`` when one is given (it always is in a login).
    """
    params = parse_qs(_query_of(text), keep_blank_values=True)
    if "error" in params:
        error = params["error"][0]
        description = params.get("error_description", [""])[0]
        raise PasteError(
            f"the authorization server refused the sign-in: {error}"
            + (f" ({description})" if description else "")
        )
    code = params.get("code", [""])[0]
    if not code:
        raise PasteError("no code= in the pasted text")
    state = params.get("state", [None])[0]
    if expected_state is not None:
        if state is None:
            raise PasteError("no state= in the pasted text")
        if not secrets.compare_digest(state, expected_state):
            raise PasteError("state does not match this login (was it from an older attempt?)")
    iss = params.get("iss", [None])[0]
    return Redirect(code=code, state=state, iss=iss)


def check_paste(text: str, expected_state: str | None) -> str | None:
    """None when ``text`` is a usable redirect for this login, else what is wrong with it."""
    try:
        parse_redirect(text, expected_state)
    except PasteError as exc:
        return str(exc)
    return None
