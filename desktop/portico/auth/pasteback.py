"""Parse a redirect the person pasted: the full URL, ``?code=…&state=…`` or ``code=…&state=…``."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from urllib.parse import parse_qs, urlparse


class PasteError(ValueError):
    """The pasted text is not a usable redirect; the message says why (never the code)."""


class StateMismatch(PasteError):
    """The redirect is not for this login (no state, or another one): it is ignored and
    the login keeps waiting. Any local process can call the loopback address."""


class ProviderRefused(PasteError):
    """The authorization server answered this login (the state matched) with an error:
    the person declined, or the server refused. Ends the login."""

    def __init__(self, error: str, description: str = "") -> None:
        self.error = error
        self.description = description
        super().__init__(denial_message(error, description))


DECLINED = "You declined access at the provider"


def denial_message(error: str, description: str = "") -> str:
    from portico.config.masking import mask_text

    if error == "access_denied":
        return f"{DECLINED}."
    shown = mask_text(description)[:200]
    return f"The authorization server refused the sign-in: {error}" + (
        f" ({shown})" if shown else ""
    )


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

    ``state`` must equal ``expected_state`` when one is given (it always is in a login),
    and it is checked first, for an error answer as for a code: a redirect with another
    state raises :class:`StateMismatch` (ignore it), an error with this login's state
    raises :class:`ProviderRefused` (the login is over).
    """
    params = parse_qs(_query_of(text), keep_blank_values=True)
    state = params.get("state", [None])[0]
    if "error" not in params and not params.get("code", [""])[0]:
        raise PasteError("no code= in the pasted text")
    if expected_state is not None:
        if state is None:
            raise StateMismatch("no state= in the pasted text")
        if not secrets.compare_digest(state.encode(), expected_state.encode()):
            raise StateMismatch("state does not match this login (was it from an older attempt?)")
    if "error" in params:
        raise ProviderRefused(params["error"][0], params.get("error_description", [""])[0])
    code = params["code"][0]
    iss = params.get("iss", [None])[0]
    return Redirect(code=code, state=state, iss=iss)


def check_paste(text: str, expected_state: str | None) -> str | None:
    """None when ``text`` is a usable redirect for this login, else what is wrong with it."""
    try:
        parse_redirect(text, expected_state)
    except ProviderRefused:
        return None  # an answer for this login: the hand-off ends it with the reason
    except PasteError as exc:
        return str(exc)
    return None
