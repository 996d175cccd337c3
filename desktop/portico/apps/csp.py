"""The Content-Security-Policy of a view, built only from what its server declared.

A declared origin is kept only in the plain form a CSP source can hold safely:
``scheme://host[:port]`` with scheme https, wss, http or ws, a host of letters, digits,
dots and hyphens (``*.`` allowed as the first label, but never over a public suffix such as
``*.com``), no path, no quotes, no spaces, no semicolons. Anything else (``*``,
``'unsafe-eval'``, ``data:``, a ``; script-src *`` smuggled into an origin) is dropped and
reported, so a server can never widen its own policy beyond origins it named one by one.
Without declarations the policy is the
extension's restrictive default: nothing leaves the page.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from portico.policy.url_review import is_public_suffix

_ORIGIN = re.compile(
    r"(?P<scheme>https|wss|http|ws)://"
    r"(?P<host>(\*\.)?[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*)"
    r"(:(?P<port>[0-9]{1,5}|\*))?/?"
)

KEYS = ("connectDomains", "resourceDomains", "frameDomains", "baseUriDomains")


@dataclass(frozen=True)
class ViewCsp:
    """The origins a view may use, per kind (already checked), and what was dropped."""

    connect: tuple[str, ...] = ()
    resource: tuple[str, ...] = ()
    frame: tuple[str, ...] = ()
    base_uri: tuple[str, ...] = ()
    dropped: tuple[str, ...] = ()  # sentences: which declared entry, and why

    @property
    def reaches_out(self) -> bool:
        """True when the page may talk to, load from or frame any other origin."""
        return bool(self.connect or self.resource or self.frame)

    def header(self) -> str:
        """The policy as one header value."""
        res = " ".join(self.resource)
        extra = f" {res}" if res else ""
        directives = [
            "default-src 'none'",
            f"script-src 'self' 'unsafe-inline'{extra}",
            f"style-src 'self' 'unsafe-inline'{extra}",
            f"img-src 'self' data:{extra}",
            f"font-src 'self'{extra}",
            f"media-src 'self' data:{extra}",
            "connect-src " + (" ".join(self.connect) if self.connect else "'none'"),
            "frame-src " + (" ".join(self.frame) if self.frame else "'none'"),
            "object-src 'none'",
            "base-uri " + (" ".join(self.base_uri) if self.base_uri else "'self'"),
            "form-action 'none'",
        ]
        return "; ".join(directives)

    def lines(self) -> list[str]:
        """For a person: what the view may reach, one line per kind declared."""
        out: list[str] = []
        for label, origins in (
            ("sends data to", self.connect),
            ("loads scripts, styles, images or fonts from", self.resource),
            ("shows pages of", self.frame),
        ):
            if origins:
                out.append(f"The view {label} {', '.join(origins)}.")
        return out or ["The view reaches nothing outside itself."]


def origin(entry: object) -> str | None:
    """``entry`` as a safe CSP source (lower-cased, no trailing slash), or None."""
    if not isinstance(entry, str):
        return None
    text = entry.strip().lower()
    match = _ORIGIN.fullmatch(text)
    if match is None:
        return None
    host = match.group("host")
    if host.startswith("*.") and is_public_suffix(host[2:]):
        return None  # "*.com", "*.co.uk": every site under a public suffix is no origin
    return text.rstrip("/")


def view_csp(meta_ui: Mapping[str, Any] | None, *, resource: str) -> ViewCsp:
    """The policy from a resource content's ``_meta.ui.csp``; ``resource`` names it in
    the sentences about what was dropped."""
    csp = (meta_ui or {}).get("csp") if isinstance(meta_ui, Mapping) else None
    if csp is None:
        return ViewCsp()
    if not isinstance(csp, Mapping):
        return ViewCsp(dropped=(f"{resource}: _meta.ui.csp is not an object; it is ignored",))
    kept: dict[str, tuple[str, ...]] = {}
    dropped: list[str] = []
    for key in KEYS:
        raw = csp.get(key)
        if raw is None:
            kept[key] = ()
            continue
        entries: Sequence[object] = raw if isinstance(raw, list | tuple) else [raw]
        good: list[str] = []
        for entry in entries:
            safe = origin(entry)
            if safe is None:
                dropped.append(
                    f"{resource}: _meta.ui.csp.{key} entry {entry!r} is not a plain origin "
                    "(scheme://host[:port]); it is left out of the view's policy"
                )
            elif safe not in good:
                good.append(safe)
        kept[key] = tuple(good)
    return ViewCsp(
        connect=kept["connectDomains"],
        resource=kept["resourceDomains"],
        frame=kept["frameDomains"],
        base_uri=kept["baseUriDomains"],
        dropped=tuple(dropped),
    )
