"""How every URL is shown to a person before they open it or send something to it.

URL-mode elicitation, sign-in (OAuth authorization and device verification) addresses,
links a chat offers to open and the origin a ``portico://add`` link would send to all go
through :func:`review_url`. It puts the registrable domain first (the name someone had to
register: ``evil.co.uk`` for ``login.evil.co.uk``, from the public suffix list bundled
with the ``publicsuffixlist`` package, never fetched), shows the host's Unicode form with
its punycode (IDNA) form beside it, and warns in plain words where the name could pass for
another:

- a letter that only looks like a plain Latin one (``ɡithub.com``: U+0261 is not ``g``),
- a label mixing scripts (a Cyrillic ``а`` in ``pаypal``),
- a label written wholly in another script whose letters all look Latin (``аррӏе.com``),
- a user name before the host (``https://github.com@evil.example/``), an IP address
  (also in unusual forms such as ``0x7f.1``), plain http, or a scheme that is not a web
  page.

The look-alike data is Unicode's own: the confusables and script tables shipped by the
``confusable-homoglyphs`` package; allowed script mixes are UTS #39's "highly
restrictive" ones (Latin with Han and Japanese kana, Han with Bopomofo or Hangul). Pure
functions, nothing touches the network; the data loads once (:func:`warm`, ~0.2 s), so a
face may call :func:`warm` off its GUI thread first.
"""

from __future__ import annotations

import functools
import ipaddress
import socket
import unicodedata
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from publicsuffixlist import PublicSuffixList

WEB_SCHEMES = ("http", "https")
_COMMON = frozenset({"COMMON", "INHERITED", "Unknown"})
# UTS #39 "highly restrictive": the script sets a single label may mix.
_ALLOWED_MIXES = (
    frozenset({"LATIN", "HAN", "HIRAGANA", "KATAKANA"}),
    frozenset({"LATIN", "HAN", "BOPOMOFO"}),
    frozenset({"LATIN", "HAN", "HANGUL"}),
)


@dataclass(frozen=True)
class UrlReview:
    """One URL as a person should see it (every field is plain text, nothing escaped)."""

    url: str  # as given, stripped
    scheme: str  # lower case; "" when there is none
    before_host: str  # "https://" and any "user@" (warned about; a password shows as ***)
    host_as_written: str  # the host as the URL spells it ("xn--ithub-qmc.com", "[::1]")
    host: str  # the Unicode form, as a browser shows it ("" when there is no host)
    ascii_host: str  # the punycode (IDNA) form: the name that is really looked up
    registrable_domain: str  # Unicode form of the registered name ("" for IPs, localhost)
    after_host: str  # ":port/path?query#fragment"
    port: int | None = None
    is_ip: bool = False
    warnings: tuple[str, ...] = ()
    openable: bool = True  # http(s) with a host; anything else is never opened

    @property
    def shown_url(self) -> str:
        """The whole URL as shown: as given, except that a password in it is hidden."""
        return self.before_host + self.host_as_written + self.after_host

    @property
    def origin(self) -> str:
        """``scheme://ascii-host[:port]``: where a request to this URL goes ("" without
        a host)."""
        if not self.ascii_host:
            return ""
        host = f"[{self.ascii_host}]" if ":" in self.ascii_host else self.ascii_host
        return f"{self.scheme}://{host}" + (f":{self.port}" if self.port else "")

    @property
    def site(self) -> str:
        """The registrable domain (or the host), with its punycode form beside it when
        that differs: ``ɡithub.com (punycode xn--ithub-qmc.com)``."""
        name = self.registrable_domain or self.host
        if not name:
            return "(no site)"
        if self.is_ip:
            return f"{name} (an IP address, not a name)"
        ascii_name = _to_ascii(name) or name
        return name if ascii_name == name else f"{name} (punycode {ascii_name})"

    @property
    def host_line(self) -> str:
        """The whole host, Unicode and punycode: ``login.ɡithub.com (punycode ...)``."""
        if self.ascii_host and self.ascii_host != self.host:
            return f"{self.host} (punycode {self.ascii_host})"
        return self.host

    def lines(self, address: str = "Address: ") -> tuple[str, ...]:
        """What every face shows, in order: the site first, the host when it says more,
        the whole address (after ``address``; "" leaves it bare, for a terminal to copy),
        then each warning."""
        out = [f"Site: {self.site}"]
        if self.host and self.host != (self.registrable_domain or self.host):
            out.append(f"Host: {self.host_line}")
        out.append(f"{address}{self.shown_url}")
        out += [f"Warning: {w}" for w in self.warnings]
        return tuple(out)


def warm() -> None:
    """Load the public suffix list and the Unicode tables now (faces: off the GUI thread)."""
    _psl()
    _confusables()


@functools.cache
def is_public_suffix(host: str) -> bool:
    """True for a suffix under which anyone can register a name (com, co.uk, github.io)."""
    return bool(_psl().is_public(host.lower().rstrip(".")))


def _psl() -> PublicSuffixList:
    from publicsuffixlist import PublicSuffixList

    return PublicSuffixList()  # the snapshot inside the package; no download


@functools.cache
def _confusables() -> tuple[object, object]:
    from confusable_homoglyphs import categories, confusables

    return categories, confusables


def _script(char: str) -> str:
    categories, _ = _confusables()
    return str(categories.alias(char))  # type: ignore[attr-defined]


def _char_name(char: str) -> str:
    return f"U+{ord(char):04X} {unicodedata.name(char, 'unnamed character')}"


@functools.cache
def _latin_look_alike(char: str) -> str | None:
    """The plain ASCII letter or digit ``char`` can pass for (Unicode confusables), if any."""
    if char.isascii():
        return None
    _, confusables = _confusables()
    found = confusables.is_confusable(char, greedy=True)  # type: ignore[attr-defined]
    for entry in found or ():
        for glyph in entry["homoglyphs"]:
            text = glyph["c"]
            if len(text) == 1 and text.isascii() and text.isalnum():
                return str(text).lower()
    return None


def _to_ascii(host: str) -> str | None:
    """The IDNA (UTS #46) form, or None when the name cannot be encoded."""
    import idna

    try:
        return idna.encode(host, uts46=True).decode("ascii")
    except (idna.IDNAError, UnicodeError, ValueError):
        try:
            return host.encode("idna").decode("ascii")
        except UnicodeError:
            return None


def _to_unicode(label: str) -> str | None:
    import idna

    try:
        return str(idna.decode(label))
    except (idna.IDNAError, UnicodeError, ValueError):
        return None


def _label_warnings(label: str) -> list[str]:
    """Look-alike warnings for one label in its Unicode form."""
    if label.isascii():
        return []
    letters = [c for c in label if c.isalpha()]
    scripts = {_script(c) for c in letters} - _COMMON
    if len(scripts) > 1 and not any(scripts <= mix for mix in _ALLOWED_MIXES):
        names = " and ".join(sorted(s.title() for s in scripts))
        return [f"'{label}' mixes {names} letters in one name: it may imitate another name"]
    look = {c: _latin_look_alike(c) for c in letters if not c.isascii()}
    alike = {c: a for c, a in look.items() if a is not None}
    if not alike:
        return []
    if scripts == {"LATIN"}:
        said = ", ".join(f"'{c}' ({_char_name(c)}) only looks like '{a}'" for c, a in alike.items())
        return [f"'{label}' is not the plain-letter name it looks like: {said}"]
    if len(alike) == len(look) and all(not c.isascii() for c in letters):
        script = next(iter(scripts)).title() if scripts else "another script's"
        return [
            f"'{label}' is written entirely in {script} letters that look like Latin ones: "
            "it is not the Latin-letter name it resembles"
        ]
    return []


def _ip_of(host: str) -> str | None:
    """The address ``host`` is, when it is one (also 0x7f.1 / 2130706433 / 010.0.0.1)."""
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        pass
    parts = host.split(".") if host else []
    if parts and all(p.isalnum() and (p[:2].lower() == "0x" or p.isdigit()) for p in parts):
        try:
            return socket.inet_ntoa(socket.inet_aton(host))
        except OSError:
            return None
    return None


def review_url(url: str) -> UrlReview:
    """How to show ``url`` (see the module docstring); never raises on odd input."""
    text = url.strip()
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        return UrlReview(
            text,
            "",
            "",
            text,
            "",
            "",
            "",
            "",
            warnings=("it is not a valid address",),
            openable=False,
        )
    warnings: list[str] = []
    scheme = parts.scheme.lower()
    openable = scheme in WEB_SCHEMES
    if not openable:
        warnings.append(
            f"it is a {scheme or 'schemeless'}: address, not a web page; it is not opened"
        )
    elif scheme == "http":
        warnings.append("it is plain http: what you send there can be read on the way")
    raw_host = (parts.hostname or "").rstrip(".")
    ip = _ip_of(raw_host)
    if ip is not None:
        host = ascii_host = raw_host
        registrable = ""
        shown_ip = ip if ip == raw_host else f"{raw_host}, which is {ip}"
        warnings.append(f"it points at a bare IP address ({shown_ip}), not a name")
    else:
        labels: list[str] = []
        for label in raw_host.split(".") if raw_host else []:
            if label.startswith("xn--"):
                decoded = _to_unicode(label)
                if decoded is None:
                    warnings.append(f"'{label}' is not valid punycode: it names nothing readable")
                labels.append(decoded or label)
            else:
                labels.append(label)
        host = ".".join(labels)
        encoded = _to_ascii(host) if host else ""
        if encoded is None:
            warnings.append(f"'{host}' is not a valid name for the internet (IDNA)")
        ascii_host = host if encoded is None else encoded
        for label in labels:
            warnings += _label_warnings(label)
        registrable = (_psl().privatesuffix(host) or "") if host else ""
    if parts.username is not None or parts.password is not None:
        site = registrable or host
        warnings.append(
            f"the part before '@' ({parts.username or ''}) is not the site: the site is {site}"
        )
    netloc = parts.netloc
    at = netloc.rfind("@")
    userinfo = netloc[: at + 1] if at >= 0 else ""
    if parts.password is not None:
        userinfo = f"{parts.username or ''}:***@"
    host_as_written = netloc[at + 1 :]
    if port is not None or host_as_written.endswith(":"):
        host_as_written = host_as_written[: host_as_written.rfind(":")]
    before = f"{parts.scheme}://{userinfo}" if parts.scheme else userinfo
    after = (f":{port}" if port else "") + parts.path
    after += (f"?{parts.query}" if parts.query else "") + (
        f"#{parts.fragment}" if parts.fragment else ""
    )
    if not netloc:  # "javascript:...", "mailto:...": nothing to set apart
        before, host_as_written, after = "", "", text
    return UrlReview(
        url=text,
        scheme=scheme,
        before_host=before,
        host_as_written=host_as_written,
        host=host,
        ascii_host=ascii_host,
        registrable_domain=registrable,
        after_host=after,
        port=port,
        is_ip=ip is not None,
        warnings=tuple(warnings),
        openable=openable and bool(host),
    )
