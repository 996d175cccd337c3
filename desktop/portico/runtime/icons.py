"""Icons that servers announce (MCP ``icons`` arrays on the server, tools, prompts and
resources): choose one, check where it may come from, fetch it without credentials,
check what it is, and keep it on disk by content hash.

Rules:
- ``data:`` always; ``https:`` only from the server's own origin (scheme, host, port), and
  only for a server reached over HTTP(S). A stdio server has no origin, so its icons must be
  ``data:`` (anything else would let a local process make Portico fetch arbitrary URLs).
- ``http:`` only when the server itself is on loopback (``127.0.0.1``, ``::1`` or
  ``localhost``) and the icon has that same origin: nothing crosses the network in clear.
- A URL carrying user:password is refused. The fetch uses a fresh client: no cookies, no
  auth headers, no proxy from the environment, and redirects are followed by hand only
  while they stay on the same origin. The caller passes a transport factory that dials
  the server's pinned addresses (policy's DNS pinning), so an icon host cannot be
  re-resolved somewhere else, with the server connection's own TLS settings (its
  ``ca_cert``, and its ``client_cert`` for an mTLS server: the origin is that server).
- PNG and JPEG are kept as they are (their magic bytes are checked). SVG is parsed and
  rebuilt from an allow-list (no scripts, foreignObject, event attributes or references
  outside the document); a DOCTYPE is refused outright. WebP is kept only when the caller
  says it can decode it (the GUI asks Qt).
- At most ``MAX_ICON_BYTES`` per icon and ``MAX_CACHE_BYTES`` in all; the least recently
  used files go first.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hashlib
import ipaddress
import os
import re
import urllib.parse
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import httpx2 as httpx

MAX_ICON_BYTES = 256 * 1024
MAX_CACHE_BYTES = 16 * 1024 * 1024
MAX_REDIRECTS = 3
MAX_TOOL_ICONS = 200  # per server (tools, prompts, resources): the first ones get icons
FETCH_TIMEOUT = 10.0

PNG, JPEG, SVG, WEBP = "image/png", "image/jpeg", "image/svg+xml", "image/webp"
_SUFFIX = {PNG: ".png", JPEG: ".jpg", SVG: ".svg", WEBP: ".webp"}
_LOOPBACK_NAMES = {"localhost"}


class IconRefused(Exception):
    """An icon Portico will not show; the message says which and why (one line)."""


@dataclass(frozen=True)
class IconRef:
    src: str
    mime_type: str | None = None
    sizes: tuple[str, ...] = ()
    theme: str | None = None


def refs(icons: Iterable[Any] | None) -> list[IconRef]:
    """The SDK's ``Icon`` models (or plain dicts) as ``IconRef``s; entries without src drop."""
    out: list[IconRef] = []
    for icon in icons or ():
        get = icon.get if isinstance(icon, dict) else lambda k, i=icon: getattr(i, k, None)
        src = get("src")
        if not isinstance(src, str) or not src:
            continue
        mime = get("mimeType") or get("mime_type")
        sizes = get("sizes") or ()
        out.append(
            IconRef(
                src=src,
                mime_type=mime if isinstance(mime, str) else None,
                sizes=tuple(s for s in sizes if isinstance(s, str)),
                theme=get("theme") if isinstance(get("theme"), str) else None,
            )
        )
    return out


def _largest(sizes: Sequence[str]) -> int:
    best = 0
    for size in sizes:
        if size == "any":
            return 1 << 20
        m = re.fullmatch(r"(\d+)x(\d+)", size)
        if m:
            best = max(best, min(int(m[1]), int(m[2])))
    return best


def choose(icons: Iterable[IconRef], *, dark: bool = False) -> list[IconRef]:
    """Candidates best first: the wanted theme (or none given) before the other theme, then
    PNG/SVG before other types, then the largest declared size."""
    wanted = "dark" if dark else "light"
    rank_type = {PNG: 0, SVG: 0, JPEG: 1, WEBP: 2}

    def key(ref: IconRef) -> tuple[int, int, int]:
        theme = 0 if ref.theme in (None, wanted) else 1
        kind = rank_type.get(ref.mime_type or "", 1)
        return (theme, kind, -_largest(ref.sizes))

    return sorted(icons, key=key)


# --- where an icon may come from ---------------------------------------------------------


def _origin(url: urllib.parse.SplitResult) -> tuple[str, str, int]:
    scheme = url.scheme.lower()
    port = url.port or (443 if scheme == "https" else 80)
    return (scheme, (url.hostname or "").lower(), port)


def _is_loopback(host: str) -> bool:
    if host in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_source(src: str, server_url: str | None) -> None:
    """Raise ``IconRefused`` unless ``src`` may be fetched for a server at ``server_url``
    (``None``: a stdio server, which may only give ``data:`` icons)."""
    if src.startswith("data:"):
        return
    try:
        url = urllib.parse.urlsplit(src)
        _ = url.port  # a malformed port raises here
    except ValueError as exc:
        raise IconRefused(f"icon URL is malformed: {exc}") from None
    if url.username is not None or url.password is not None:
        raise IconRefused("icon URL carries credentials; Portico never sends them")
    scheme = url.scheme.lower()
    if scheme not in ("https", "http"):
        raise IconRefused(f"icon URL scheme {scheme or '(none)'}: is not https: or data:")
    if server_url is None:
        raise IconRefused("a local (stdio) server's icons must be data: URLs")
    server = urllib.parse.urlsplit(server_url)
    if _origin(url) != _origin(server):
        raise IconRefused(
            f"icon {_short(src)} is not on the server's origin {server.scheme}://{server.netloc}"
        )
    # http: only for a server that is itself on loopback (same origin, so the icon is too).
    if scheme == "http" and not _is_loopback((url.hostname or "").lower()):
        raise IconRefused(f"icon {_short(src)} is plain http: on a non-loopback host")


def _short(src: str) -> str:
    return src if len(src) <= 80 else src[:77] + "..."


# --- what an icon is ---------------------------------------------------------------------


def sniff(data: bytes) -> str | None:
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return PNG
    if data.startswith(b"\xff\xd8\xff"):
        return JPEG
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return WEBP
    head = data[:1024].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if head.startswith(b"<?xml") or head.startswith(b"<svg") or b"<svg" in head:
        return SVG
    return None


_SVG_NS = "http://www.w3.org/2000/svg"
_XLINK_NS = "http://www.w3.org/1999/xlink"
_SVG_ELEMENTS = frozenset(
    [
        "svg",
        "g",
        "defs",
        "title",
        "desc",
        "symbol",
        "use",
        "path",
        "rect",
        "circle",
        "ellipse",
        "line",
        "polyline",
        "polygon",
        "text",
        "tspan",
        "linearGradient",
        "radialGradient",
        "stop",
        "clipPath",
        "mask",
        "pattern",
        "filter",
        "feGaussianBlur",
        "feOffset",
        "feBlend",
        "feColorMatrix",
        "feFlood",
        "feComposite",
        "feMerge",
        "feMergeNode",
    ]
)
_SVG_ATTRIBUTES = frozenset(
    [
        "id",
        "class",
        "viewBox",
        "width",
        "height",
        "x",
        "y",
        "x1",
        "y1",
        "x2",
        "y2",
        "cx",
        "cy",
        "r",
        "rx",
        "ry",
        "d",
        "points",
        "transform",
        "fill",
        "fill-opacity",
        "fill-rule",
        "stroke",
        "stroke-width",
        "stroke-opacity",
        "stroke-linecap",
        "stroke-linejoin",
        "stroke-dasharray",
        "stroke-dashoffset",
        "stroke-miterlimit",
        "opacity",
        "color",
        "display",
        "visibility",
        "clip-path",
        "clip-rule",
        "mask",
        "filter",
        "offset",
        "stop-color",
        "stop-opacity",
        "gradientUnits",
        "gradientTransform",
        "spreadMethod",
        "fx",
        "fy",
        "preserveAspectRatio",
        "font-family",
        "font-size",
        "font-weight",
        "text-anchor",
        "dominant-baseline",
        "patternUnits",
        "patternContentUnits",
        "clipPathUnits",
        "maskUnits",
        "maskContentUnits",
        "stdDeviation",
        "dx",
        "dy",
        "in",
        "in2",
        "result",
        "mode",
        "values",
        "type",
        "operator",
        "k1",
        "k2",
        "k3",
        "k4",
        "flood-color",
        "flood-opacity",
        "version",
    ]
)
_URL_REF = re.compile(r"url\(\s*['\"]?\s*([^)'\"\s]*)", re.IGNORECASE)


def _local_refs_only(value: str) -> bool:
    return all(ref.startswith("#") for ref in _URL_REF.findall(value))


def sanitize_svg(data: bytes) -> bytes:
    """Parse ``data`` and rebuild it from the allow-list; raise ``IconRefused`` if it cannot
    be parsed or is not an SVG. Dropped: scripts, foreignObject, styles, every element and
    attribute not listed, every ``on*`` attribute, and references outside the document."""
    # Only UTF-8 (or ASCII): another encoding could hide a DOCTYPE from the check below.
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        raise IconRefused("SVG icon is not UTF-8") from None
    # A DOCTYPE can declare entities (billion laughs, external entities): refuse it before
    # the parser sees it; an icon has no need for one.
    if re.search(rb"<!\s*(DOCTYPE|ENTITY)", data, re.IGNORECASE):
        raise IconRefused("SVG icon declares a DOCTYPE or entities")
    try:
        root = ET.fromstring(data)
    except ET.ParseError as exc:
        raise IconRefused(f"SVG icon does not parse: {exc}") from None
    if _local(root.tag) != "svg" or _ns(root.tag) not in ("", _SVG_NS):
        raise IconRefused("icon is not an SVG document")
    clean = _rebuild(root)
    assert clean is not None  # the root is an allowed <svg>
    # Built with plain names (the parser's {ns}tags are checked above), so the namespace
    # declarations are written as attributes once, on the root.
    clean.set("xmlns", _SVG_NS)
    clean.set("xmlns:xlink", _XLINK_NS)
    out: bytes = ET.tostring(clean, encoding="utf-8", xml_declaration=True)
    return out


def _ns(tag: str) -> str:
    return tag[1:].split("}", 1)[0] if tag.startswith("{") else ""


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _rebuild(element: ET.Element) -> ET.Element | None:
    if not isinstance(element.tag, str) or _ns(element.tag) not in ("", _SVG_NS):
        return None
    name = _local(element.tag)
    if name not in _SVG_ELEMENTS:
        return None
    out = ET.Element(name)
    for key, value in element.attrib.items():
        local, ns = _local(key), _ns(key)
        if local.lower().startswith("on"):
            continue
        if local == "href" and ns in ("", _XLINK_NS):
            if value.strip().startswith("#"):
                out.set("xlink:href" if ns else "href", value.strip())
            continue
        if ns or local not in _SVG_ATTRIBUTES or not _local_refs_only(value):
            continue
        out.set(local, value)
    if name in ("title", "desc", "text", "tspan"):
        out.text = element.text
    for child in element:
        kept = _rebuild(child)
        if kept is not None:
            kept.tail = None
            out.append(kept)
    return out


def accept(data: bytes, declared: str | None, *, webp_ok: bool = False) -> tuple[bytes, str]:
    """The bytes to keep and their type, or ``IconRefused``."""
    if len(data) > MAX_ICON_BYTES:
        raise IconRefused(f"icon is {len(data)} bytes; the limit is {MAX_ICON_BYTES}")
    kind = sniff(data)
    if kind is None:
        raise IconRefused(f"icon is not PNG, JPEG, SVG or WebP (declared {declared or 'none'})")
    if kind == SVG:
        return sanitize_svg(data), SVG
    if kind == WEBP and not webp_ok:
        raise IconRefused("WebP icon, and this system cannot decode WebP")
    return data, kind


def decode_data_url(src: str) -> tuple[bytes, str | None]:
    header, sep, payload = src[5:].partition(",")
    if not sep:
        raise IconRefused("data: icon has no comma")
    parts = header.split(";")
    mime = parts[0] or None
    if len(payload) > MAX_ICON_BYTES * 2:  # base64 of the cap, with room
        raise IconRefused(f"data: icon is larger than {MAX_ICON_BYTES} bytes")
    try:
        if "base64" in parts[1:]:
            return base64.b64decode(payload, validate=True), mime
        return urllib.parse.unquote_to_bytes(payload), mime
    except (binascii.Error, ValueError) as exc:
        raise IconRefused(f"data: icon is not valid base64: {exc}") from None


# --- the disk cache ----------------------------------------------------------------------


class IconCache:
    """Icon files named by the SHA-256 of their (sanitized) bytes, with a total cap."""

    def __init__(self, root: Path, *, max_bytes: int = MAX_CACHE_BYTES) -> None:
        self.root = root
        self.max_bytes = max_bytes
        # src -> its file, for this process: a reconnect does not download its icons again.
        self.known: dict[str, Path] = {}

    def store(self, data: bytes, kind: str) -> Path:
        self.root.mkdir(parents=True, exist_ok=True)
        path = self.root / (hashlib.sha256(data).hexdigest() + _SUFFIX[kind])
        if path.is_file():
            os.utime(path)  # recently used: evicted last
            return path
        tmp = path.with_suffix(path.suffix + ".part")
        tmp.write_bytes(data)
        os.replace(tmp, path)
        self.evict(keep=path)
        return path

    def evict(self, keep: Path | None = None) -> None:
        files = [p for p in self.root.glob("*") if p.is_file() and not p.name.endswith(".part")]
        stats = sorted((p.stat().st_mtime, p.stat().st_size, p) for p in files)
        total = sum(size for _, size, _ in stats)
        for _, size, path in stats:
            if total <= self.max_bytes:
                break
            if path == keep:
                continue
            path.unlink(missing_ok=True)
            total -= size


# --- fetching ----------------------------------------------------------------------------


Transports = Callable[[], httpx.AsyncBaseTransport]


async def _get(src: str, server_url: str, transports: Transports | None) -> bytes:
    # A fresh client per icon: no cookie jar, no auth, no proxy settings from the
    # environment (trust_env=False), redirects followed by hand below.
    async with httpx.AsyncClient(
        follow_redirects=False,
        trust_env=False,
        timeout=FETCH_TIMEOUT,
        transport=transports() if transports is not None else None,
    ) as client:
        url = src
        for _ in range(MAX_REDIRECTS + 1):
            async with client.stream("GET", url, headers={"Accept": "image/*"}) as response:
                if response.is_redirect:
                    target = str(response.url.join(response.headers.get("location", "")))
                    try:
                        check_source(target, server_url)
                    except IconRefused as exc:
                        raise IconRefused(f"icon redirect refused: {exc}") from None
                    url = target
                    continue
                if response.status_code != 200:
                    raise IconRefused(f"icon {_short(src)}: HTTP {response.status_code}")
                declared = response.headers.get("content-length")
                if declared and declared.isdigit() and int(declared) > MAX_ICON_BYTES:
                    raise IconRefused(
                        f"icon {_short(src)} is {declared} bytes; the limit is {MAX_ICON_BYTES}"
                    )
                body = bytearray()
                async for chunk in response.aiter_bytes():
                    body += chunk
                    if len(body) > MAX_ICON_BYTES:
                        raise IconRefused(
                            f"icon {_short(src)} is over the limit of {MAX_ICON_BYTES} bytes"
                        )
                return bytes(body)
        raise IconRefused(f"icon {_short(src)}: more than {MAX_REDIRECTS} redirects")


async def fetch(
    ref: IconRef,
    server_url: str | None,
    cache: IconCache,
    *,
    webp_ok: bool = False,
    transports: Transports | None = None,
) -> Path:
    """Fetch, check and cache one icon; its file, or ``IconRefused``."""
    check_source(ref.src, server_url)
    known = cache.known.get(ref.src)
    if known is not None and await asyncio.to_thread(known.is_file):
        return known
    if ref.src.startswith("data:"):
        data, declared = decode_data_url(ref.src)
    else:
        assert server_url is not None  # check_source refused a stdio server's URL
        try:
            data = await _get(ref.src, server_url, transports)
        except httpx.HTTPError as exc:
            raise IconRefused(f"icon {_short(ref.src)} could not be fetched: {exc}") from None
        declared = ref.mime_type
    kept, kind = accept(data, declared or ref.mime_type, webp_ok=webp_ok)
    path = await asyncio.to_thread(cache.store, kept, kind)
    if not ref.src.startswith("data:"):  # data: costs no request (and makes a huge key)
        if len(cache.known) >= 4096:
            cache.known.clear()
        cache.known[ref.src] = path
    return path


async def fetch_best(
    icons: Iterable[Any] | None,
    server_url: str | None,
    cache: IconCache,
    *,
    webp_ok: bool = False,
    note: Callable[[str], None] | None = None,
    transports: Transports | None = None,
) -> Path | None:
    """The first candidate that passes (best first), or ``None``; each refusal is noted."""
    for ref in choose(refs(icons)):
        try:
            return await fetch(ref, server_url, cache, webp_ok=webp_ok, transports=transports)
        except IconRefused as exc:
            if note is not None:
                note(str(exc))
    return None
