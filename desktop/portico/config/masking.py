"""One way to show a URL or a value in a message without showing a secret.

Every message that can carry a URL or a config value goes through these functions:
validation errors, ``config show`` (text and JSON), the trust review, ``mcp add`` echoes,
parser errors that quote a line, CLI errors.

- :func:`mask_url`: the userinfo of a URL and the values of secret-looking query
  parameters become ``***`` (references such as ``${env:X}`` stay: they name, not hold).
- :func:`mask_value`: a secret-bearing value (env, header, ``client_secret``, password):
  references stay as written, anything literal is ``********``.
- :func:`is_secret_key`: whether a key (``Authorization``, ``GITHUB_TOKEN``,
  ``oauth.client_secret``, ...) holds a secret, so its value is never printed.
- :func:`show_value`: a value for an error message about ``key``: hidden when the key is
  secret-bearing, URL-masked when it looks like a URL, else as given.
- :func:`mask_text`: free text (an exception's message, a parser's quote) with every URL
  in it masked and every known secret value replaced.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import urlsplit, urlunsplit

from portico.config.secrets import has_references, literal_text

HIDDEN = "********"
MASK = "***"

_SECRET_PARAM = re.compile(
    r"(?i)(token|secret|passw|pwd|api[_-]?key|apikey|key|sig|signature|auth|credential|code"
    r"|session|cookie|jwt|bearer)"
)

# Keys (header names, env names, config keys, dotted or not) whose values are secrets.
_SECRET_KEY = re.compile(
    r"(?i)(authorization|cookie|token|secret|passw|pwd|api[_-]?key|apikey|(^|[_.-])key$"
    r"|private[_-]?key|credential|bearer|session|signature|^password$|id_token|assertion)"
)


def is_secret_key(key: str) -> bool:
    """True when the value of ``key`` (header, env name, config key) is a secret."""
    last = key.rsplit(".", 1)[-1]
    return bool(_SECRET_KEY.search(last)) or last.lower() in ("env", "headers")


def mask_value(value: str) -> str:
    """A secret-bearing value as safe to show: references stay, literal secrets are hidden.

    A value made of references plus at most a short scheme word ("Bearer ${env:TOKEN}") is
    shown as written; anything else is replaced by ``********``.
    """
    if not has_references(value):
        return HIDDEN if value else value
    rest = literal_text(value).strip()
    if not rest or (rest.isalpha() and len(rest) <= 12):
        return value
    return HIDDEN


def mask_url(url: str) -> str:
    """``url`` safe to show: its userinfo and secret-looking query values hidden.

    ``https://me:pw@host/mcp?api_key=abc&team=x`` -> ``https://me:***@host/mcp?api_key=***&team=x``;
    a user name alone (often a token: ``https://ghp_x@host``) becomes ``***@host``.
    """
    try:
        parts = urlsplit(url)
    except ValueError:
        return HIDDEN
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        if ":" in userinfo:
            user = userinfo.split(":", 1)[0]
            netloc = f"{user}:{MASK}@{host}"
        elif has_references(userinfo):
            netloc = f"{userinfo}@{host}"
        else:
            netloc = f"{MASK}@{host}"
    query = "&".join(
        f"{name}={MASK}"
        if _SECRET_PARAM.search(name) and value and not has_references(value)
        else (f"{name}={value}" if sep else name)
        for name, sep, value in (item.partition("=") for item in parts.query.split("&") if item)
    )
    fragment = parts.fragment
    if fragment and "=" in fragment:  # some providers answer in the fragment
        fragment = "&".join(
            f"{n}={MASK}" if _SECRET_PARAM.search(n) and v else (f"{n}={v}" if s else n)
            for n, s, v in (item.partition("=") for item in fragment.split("&") if item)
        )
    return urlunsplit((parts.scheme, netloc, parts.path, query, fragment))


_URL_IN_TEXT = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s'\"<>`]+")


def looks_like_url(value: str) -> bool:
    return bool(_URL_IN_TEXT.fullmatch(value.strip()))


def show_value(key: str, value: object) -> str:
    """``value`` for a message about ``key``: never a secret, URLs masked."""
    if is_secret_key(key):
        if isinstance(value, str):
            return repr(mask_value(value))
        return "a value (hidden)"
    if isinstance(value, str):
        return repr(mask_text(value))
    return str(value)


def mask_text(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with every URL in it masked and each of ``secrets`` replaced by ``***``."""
    out = _URL_IN_TEXT.sub(lambda m: mask_url(m.group(0)), text)
    for secret in sorted({s for s in secrets if s and len(s) >= 4}, key=len, reverse=True):
        out = out.replace(secret, MASK)
    return out
