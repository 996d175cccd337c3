"""Announced icons: where they may come from, what is kept, the cache, and real fetches
from an SDK server (tests/servers/iconic.py) over 127.0.0.1."""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest

from portico.runtime import icons
from portico.runtime.connection import Connection
from portico.runtime.events import EventBus, Status
from portico.runtime.hooks import ConnectionHooks
from portico.runtime.icons import IconCache, IconRef, IconRefused
from tests.helpers.iconic import start_iconic
from tests.helpers.servers import RunningServer, stop_server
from tests.helpers.specs import make_spec
from tests.servers.iconic import EVIL_SVG, data_url, png_bytes

from .conftest import eventually

JPEG = bytes.fromhex("ffd8ffe000104a46494600010100000100010000ffd9")


@pytest.fixture(scope="module")
def iconic() -> Iterator[RunningServer]:
    server = start_iconic()
    yield server
    stop_server(server)


def _bytes(path: str | None) -> bytes:
    assert path is not None
    return Path(path).read_bytes()


def origin(server: RunningServer) -> str:
    return f"http://127.0.0.1:{server.port}"


# --- sources -----------------------------------------------------------------------------


def test_data_urls_pass_for_every_server() -> None:
    icons.check_source(data_url(png_bytes()), None)
    icons.check_source(data_url(png_bytes()), "https://mcp.example.com/mcp")


@pytest.mark.parametrize(
    ("src", "server", "why"),
    [
        ("https://cdn.example.net/i.png", "https://mcp.example.com/mcp", "origin"),
        ("https://mcp.example.com:8443/i.png", "https://mcp.example.com/mcp", "origin"),
        ("http://mcp.example.com/i.png", "http://mcp.example.com/mcp", "plain http"),
        ("https://user:pw@mcp.example.com/i.png", "https://mcp.example.com/mcp", "credentials"),
        ("https://tok@mcp.example.com/i.png", "https://mcp.example.com/mcp", "credentials"),
        ("file:///etc/passwd", "https://mcp.example.com/mcp", "scheme"),
        ("javascript:alert(1)", "https://mcp.example.com/mcp", "scheme"),
        ("https://mcp.example.com/i.png", None, "stdio"),
        ("http://127.0.0.1:9/i.png", "http://localhost:9/mcp", "origin"),
    ],
)
def test_refused_sources(src: str, server: str | None, why: str) -> None:
    with pytest.raises(IconRefused, match=why):
        icons.check_source(src, server)


def test_same_origin_https_and_loopback_http_pass() -> None:
    icons.check_source("https://mcp.example.com/static/i.png", "https://mcp.example.com/mcp")
    icons.check_source("https://mcp.example.com:443/i.png", "https://mcp.example.com/mcp")
    icons.check_source("http://127.0.0.1:8000/i.png", "http://127.0.0.1:8000/mcp")
    icons.check_source("http://localhost:8000/i.png", "http://localhost:8000/mcp")


# --- contents ----------------------------------------------------------------------------


def test_png_and_jpeg_are_kept_as_they_are() -> None:
    assert icons.accept(png_bytes(), "image/png") == (png_bytes(), icons.PNG)
    assert icons.accept(JPEG, None) == (JPEG, icons.JPEG)


def test_malicious_svg_is_rebuilt_without_active_or_external_parts() -> None:
    clean, kind = icons.accept(EVIL_SVG, "image/svg+xml")
    assert kind == icons.SVG
    text = clean.decode()
    for bad in ("script", "alert", "foreignObject", "onload", "onclick", "tracker.example"):
        assert bad not in text, bad
    root = ET.fromstring(clean)
    tags = [el.tag.rsplit("}", 1)[-1] for el in root.iter()]
    assert tags == ["svg", "rect", "circle"]  # the image with an outside href is gone
    circle = root.find("{http://www.w3.org/2000/svg}circle")
    assert circle is not None and circle.get("fill") == "#2a64b8"


@pytest.mark.parametrize(
    "svg",
    [
        b'<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY a "aaaa">]><svg>&a;</svg>',
        b'<!DOCTYPE svg SYSTEM "http://x/evil.dtd"><svg/>',
        b"<svg><unclosed></svg>",
        b'<html xmlns="http://www.w3.org/1999/xhtml"><svg/></html>',
        '<?xml version="1.0" encoding="UTF-16"?><!DOCTYPE svg [<!ENTITY a "b">]><svg/>'.encode(
            "utf-16"
        ),
    ],
)
def test_unsafe_or_broken_svg_is_refused(svg: bytes) -> None:
    with pytest.raises(IconRefused, match=r"SVG|not an SVG"):
        icons.accept(svg, "image/svg+xml")


def test_oversized_and_unknown_bytes_are_refused() -> None:
    with pytest.raises(IconRefused, match="limit"):
        icons.accept(png_bytes() + b"\0" * icons.MAX_ICON_BYTES, "image/png")
    with pytest.raises(IconRefused, match="not PNG, JPEG"):
        icons.accept(b"GIF89a....", "image/png")  # the declared type is not believed


def test_webp_only_when_the_face_decodes_it() -> None:
    webp = (  # a 1x1 lossless WebP
        b"RIFF\x1a\x00\x00\x00WEBPVP8L\x0d\x00\x00\x00"
        b"/\x00\x00\x00\x10\x07\x10\x11\x11\x88\x88\xfe\x07\x00"
    )
    with pytest.raises(IconRefused, match="WebP"):
        icons.accept(webp, "image/webp")
    assert icons.accept(webp, "image/webp", webp_ok=True)[1] == icons.WEBP


def test_choose_prefers_the_theme_then_the_largest() -> None:
    small = IconRef("data:a", "image/png", ("16x16",))
    large = IconRef("data:b", "image/png", ("64x64",))
    dark = IconRef("data:c", "image/png", ("128x128",), theme="dark")
    assert icons.choose([small, dark, large]) == [large, small, dark]
    assert icons.choose([small, dark, large], dark=True)[0] == dark


# --- the cache ---------------------------------------------------------------------------


def test_cache_names_by_content_and_evicts_the_least_recent(tmp_path: Path) -> None:
    sizes = [len(png_bytes(rgb=(i, 0, 0))) for i in (1, 2, 3, 4)]
    cache = IconCache(
        tmp_path / "icons", max_bytes=sum(sizes[1:]) + min(sizes) - 1
    )  # room for three
    first = cache.store(png_bytes(rgb=(1, 0, 0)), icons.PNG)
    assert cache.store(png_bytes(rgb=(1, 0, 0)), icons.PNG) == first  # same bytes, same file

    os.utime(first, (1, 1))  # long unused
    others = [cache.store(png_bytes(rgb=(i, 0, 0)), icons.PNG) for i in (2, 3, 4)]
    assert not first.exists()
    assert all(p.exists() for p in others)
    assert sum(p.stat().st_size for p in (tmp_path / "icons").iterdir()) <= cache.max_bytes


# --- real fetches ------------------------------------------------------------------------


slow = pytest.mark.slow  # starts tests/servers/iconic.py


@slow
async def test_fetch_png_from_the_servers_origin(iconic: RunningServer, tmp_path: Path) -> None:
    cache = IconCache(tmp_path / "icons")
    path = await icons.fetch(IconRef(origin(iconic) + "/icon.png"), iconic.url, cache)
    assert path.read_bytes() == png_bytes()
    assert path.parent == tmp_path / "icons" and path.suffix == ".png"


@slow
async def test_a_known_icon_is_not_fetched_again(iconic: RunningServer, tmp_path: Path) -> None:
    cache = IconCache(tmp_path / "icons")
    ref = IconRef(origin(iconic) + "/icon.png")
    first = await icons.fetch(ref, iconic.url, cache)
    # Another origin now: a fetch would be refused, so an answer proves the cache answered.
    cache.known[origin(iconic) + "/away"] = first
    assert await icons.fetch(IconRef(origin(iconic) + "/away"), iconic.url, cache) == first
    first.unlink()  # evicted: fetched again (and refused, being a cross-origin redirect)
    with pytest.raises(IconRefused, match="redirect"):
        await icons.fetch(IconRef(origin(iconic) + "/away"), iconic.url, cache)


@slow
async def test_fetch_sends_no_cookie_or_auth(iconic: RunningServer, tmp_path: Path) -> None:
    path = await icons.fetch(
        IconRef(origin(iconic) + "/cookie.png"), iconic.url, IconCache(tmp_path / "icons")
    )
    assert path.read_bytes() == png_bytes()


@slow
@pytest.mark.parametrize(
    ("where", "why"),
    [("/big.png", "limit"), ("/away", "redirect refused.*origin"), ("/missing.png", "HTTP 404")],
)
async def test_fetch_refusals(iconic: RunningServer, tmp_path: Path, where: str, why: str) -> None:
    with pytest.raises(IconRefused, match=why):
        await icons.fetch(
            IconRef(origin(iconic) + where), iconic.url, IconCache(tmp_path / "icons")
        )
    assert not (tmp_path / "icons").exists()


@slow
async def test_fetch_svg_is_stored_sanitized(iconic: RunningServer, tmp_path: Path) -> None:
    path = await icons.fetch(
        IconRef(origin(iconic) + "/evil.svg"), iconic.url, IconCache(tmp_path / "icons")
    )
    assert b"script" not in path.read_bytes() and path.suffix == ".svg"


@slow
async def test_connection_fetches_server_and_tool_icons(
    iconic: RunningServer, tmp_path: Path
) -> None:
    bus = EventBus()
    hooks = ConnectionHooks(icon_cache=IconCache(tmp_path / "icons"))
    conn = Connection(make_spec("iconic", "http", url=iconic.url), bus=bus, hooks=hooks)
    await conn.start()
    try:
        state = await conn.wait_settled(30)
        assert state.status is Status.RUNNING, state.error
        await eventually(lambda: conn.state.icon is not None, what="the server icon")
        assert _bytes(conn.state.icon) == png_bytes()
        await eventually(lambda: "paint" in conn.icons.tools, what="the tool icon")
        assert _bytes(conn.icons.tools["paint"]) == png_bytes(rgb=(200, 40, 40))
        green = png_bytes(rgb=(40, 160, 60))
        assert _bytes(conn.icons.prompts.get("greet")) == green
        assert _bytes(conn.icons.resources.get("iconic://readme")) == green
        assert len({*conn.icons.tools.values(), conn.state.icon}) == 2
    finally:
        await conn.stop()


@slow
async def test_connection_without_cache_fetches_nothing(iconic: RunningServer) -> None:
    conn = Connection(make_spec("iconic", "http", url=iconic.url), bus=EventBus())
    await conn.start()
    try:
        assert (await conn.wait_settled(30)).status is Status.RUNNING
        assert conn.state.icon is None and conn.icons.tools == conn.icons.prompts == {}
    finally:
        await conn.stop()
