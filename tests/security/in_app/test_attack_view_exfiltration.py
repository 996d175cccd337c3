"""Attack: a server's view sends what it saw to a place it never declared.

Rule: a view reaches only the origins its server declared in ``_meta.ui.csp`` (checked
one by one, ``apps/csp.py``), enforced twice: the page's Content-Security-Policy and the
server profile's request fence (``ui/views/engine.py``); it cannot navigate its page, open
a window or submit a form anywhere. The control run declares the origin and sees the
fetch arrive, so the test can tell a blocked leak from one that never tried.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from PySide6.QtWidgets import QLineEdit

from tests.helpers.logs import AllowLogs
from tests.helpers.servers import recording_server
from tests.ui.pages_helpers import running_app, select, write_global
from tests.ui.qt_helpers import until

pytestmark = pytest.mark.slow  # a real server and the web engine

VIEWER = Path(__file__).parents[2] / "servers" / "viewer.py"


async def leaks(allow_logs: AllowLogs, *, declared: bool) -> list[str]:
    """Show the leaking view; return the paths the recording server was sent."""
    allow_logs(r"is not a plain origin|tried to reach http://127\.0\.0\.1")
    with recording_server() as (port, seen):
        leak = f"http://127.0.0.1:{port}"
        argv = [sys.executable, str(VIEWER), "--leak", leak, *(["--declare"] if declared else [])]
        write_global(f'[mcp.viewer]\ncommand = {json.dumps(argv)}\ntrust = "full"\n')
        async with running_app("viewer") as desktop:
            select(desktop, "viewer")
            page = desktop.pages.tools
            listed = lambda: page.row_of("show_weather") is not None  # noqa: E731
            await until(listed, 30, "tools")
            page.select_tool("show_weather")
            city = page.form.fields["city"].widget  # type: ignore[union-attr]
            assert isinstance(city, QLineEdit)
            city.setText("Oslo")
            page.call_button.click()
            pane = page.view_pane
            done = lambda: any("leak attempts done" in t for t in pane.heard)  # noqa: E731
            await until(done, 60, "the view's attempts")
            assert any('"rtc undefined"' in t for t in pane.heard), pane.heard
            await asyncio.sleep(2)  # what the view sent last has time to arrive
            await until(lambda: bool(seen.requests) or not declared, 10, "the control fetch")
            return [path for _method, path, _headers in seen.requests]


async def test_a_view_cannot_reach_an_origin_it_did_not_declare(allow_logs: AllowLogs) -> None:
    assert await leaks(allow_logs, declared=False) == []


async def test_control_a_declared_origin_is_reached(allow_logs: AllowLogs) -> None:
    paths = await leaks(allow_logs, declared=True)
    assert "/fetch" in paths
    assert not {"/open", "/top", "/form"} & set(paths)  # declared for fetch, not for leaving


async def framed(allow_logs: AllowLogs, *, declared: bool) -> list[str]:
    """Show a view that frames a page of the recording server; return the paths it was
    sent. Its origin is in the view's frameDomains when ``declared``."""
    allow_logs(r"is not a plain origin|tried to reach http://127\.0\.0\.1")
    with recording_server() as (port, seen):
        url = f"http://127.0.0.1:{port}"
        flags = ["--frame", url, *(["--declare-frame"] if declared else [])]
        argv = [sys.executable, str(VIEWER), *flags]
        write_global(f'[mcp.viewer]\ncommand = {json.dumps(argv)}\ntrust = "full"\n')
        async with running_app("viewer") as desktop:
            select(desktop, "viewer")
            page = desktop.pages.tools
            await until(lambda: page.row_of("show_weather") is not None, 30, "tools")
            page.select_tool("show_weather")
            city = page.form.fields["city"].widget  # type: ignore[union-attr]
            assert isinstance(city, QLineEdit)
            city.setText("Oslo")
            page.call_button.click()
            pane = page.view_pane
            done = lambda: any("frame attempted" in t for t in pane.heard)  # noqa: E731
            await until(done, 60, "the view's frame")
            await until(lambda: bool(seen.requests) or not declared, 10, "the framed page")
            await asyncio.sleep(0.5)
            return [path for _method, path, _headers in seen.requests]


async def test_a_view_cannot_frame_an_origin_it_did_not_declare(allow_logs: AllowLogs) -> None:
    assert await framed(allow_logs, declared=False) == []


async def test_a_view_frames_a_declared_frame_domain(allow_logs: AllowLogs) -> None:
    assert await framed(allow_logs, declared=True) == ["/frame"]
