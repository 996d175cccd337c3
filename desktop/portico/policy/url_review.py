"""What a person should see before opening a URL a server asked them to visit.

URL-mode elicitation shows the whole URL with its host set apart, and warns where the
host could pass for another one: punycode (``xn--``) labels, letters from more than one
script in a label (a Cyrillic "а" in "pаypal"), a user name in the URL (``bank.com@evil``),
plain http, or an address instead of a name. Pure functions: nothing is fetched.
"""

from __future__ import annotations

import ipaddress
import unicodedata
from dataclasses import dataclass
from urllib.parse import urlsplit


@dataclass(frozen=True)
class UrlReview:
    url: str
    before_host: str  # "https://" (and any "user@", which is warned about)
    host: str  # as the browser will show it (Unicode for punycode labels)
    after_host: str  # ":port/path?query#fragment"
    warnings: tuple[str, ...] = ()
    openable: bool = True  # http(s) only; anything else is never opened


def _script(char: str) -> str | None:
    if not char.isalpha():
        return None
    name = unicodedata.name(char, "")
    return name.split(" ", 1)[0] if name else None


def _mixed(label: str) -> set[str]:
    return {s for s in (_script(c) for c in label) if s is not None}


def review_url(url: str) -> UrlReview:
    parts = urlsplit(url.strip())
    warnings: list[str] = []
    scheme = parts.scheme.lower()
    openable = scheme in ("http", "https")
    if not openable:
        warnings.append(
            f"it is a {scheme or 'schemeless'}: address, not a web page; it is not opened"
        )
    elif scheme == "http":
        warnings.append("it is plain http: what you type there can be read on the way")
    raw_host = parts.hostname or ""
    shown_labels: list[str] = []
    for label in raw_host.split("."):
        shown = label
        if label.startswith("xn--"):
            try:
                shown = label.encode("ascii").decode("idna")
            except UnicodeError:
                shown = label
            warnings.append(
                f"the name {label!r} is punycode for {shown!r}: check it is the site you expect"
            )
        scripts = _mixed(shown)
        if len(scripts) > 1:
            warnings.append(
                f"{shown!r} mixes letters of {', '.join(sorted(s.title() for s in scripts))}:"
                " it may imitate another name"
            )
        shown_labels.append(shown)
    host = ".".join(shown_labels)
    try:
        ipaddress.ip_address(raw_host)
        warnings.append("it points at a bare IP address, not a name")
    except ValueError:
        pass
    if parts.username or parts.password:
        warnings.append(
            f"the part before '@' ({parts.username}) is not the site: the site is {host}"
        )
    netloc = parts.netloc
    at = netloc.rfind("@")
    userinfo = netloc[: at + 1] if at >= 0 else ""
    port = f":{parts.port}" if parts.port else ""
    before = f"{parts.scheme}://{userinfo}" if parts.scheme else userinfo
    after = port + parts.path + (f"?{parts.query}" if parts.query else "")
    after += f"#{parts.fragment}" if parts.fragment else ""
    return UrlReview(url, before, host, after, tuple(warnings), openable and bool(host))
