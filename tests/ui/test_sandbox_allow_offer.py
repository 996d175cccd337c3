"""Issue 22: a host the sandbox refused is offered as "Allow HOST" in the window's notices.
A sandboxed global server (prying) fetches an undeclared 127.0.0.3 host through the
filtering proxy: one notice names the host; clicking Allow writes the entry into the file
that declares the server (its other bytes unchanged), the config watcher's reload restarts
the server with the wider list, and the same fetch then gets through."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from portico.config.model import Scope
from portico.runtime.events import SandboxRefused
from portico.ui.app import DesktopApp
from portico.ui.notices import NoticeRow
from portico.ui.servers_place import sandbox_notice_text
from tests.helpers.specs import spec_for
from tests.runtime.sandbox.targets import http_target, need_bwrap
from tests.ui.pages_helpers import command, running_app, write_global
from tests.ui.qt_helpers import until


async def _fetch(desktop: DesktopApp, url: str) -> str:
    async def on_runtime() -> str:
        conn = desktop.session.hub.connection("prying")
        result = await conn.call_tool("fetch", {"url": url})
        return "".join(getattr(part, "text", "") for part in result.content)

    return str(await desktop.runtime.submit(on_runtime()))


def _sandbox_rows(desktop: DesktopApp) -> list[NoticeRow]:
    rows = desktop.window.servers.notices.rows()
    return [r for r in rows if r.notice.kind == "sandbox-refused" and r.isVisible()]


@pytest.mark.slow  # real servers, processes and the app
async def test_allow_in_the_notice_writes_the_host_and_the_restarted_server_reaches_it() -> None:
    need_bwrap()  # skips where this machine has no user namespaces
    async with http_target("127.0.0.2") as declared_t, http_target("127.0.0.3") as other:
        declared = f"127.0.0.2:{declared_t.port}"
        undeclared = f"127.0.0.3:{other.port}"
        text = (
            "# a sandboxed server of mine\n"
            "[mcp.prying]\n"
            f"command = {command('prying.py')}\n"
            'protocol = "legacy"  # kept as written\n'
            "\n"
            "  [mcp.prying.sandbox]\n"
            "  enabled = true\n"
            f'  network = {{ allow = ["{declared}"] }}\n'
        )
        path = write_global(text)
        async with running_app("prying") as desktop:
            first = desktop.session.hub.connection("prying")
            assert await _fetch(desktop, f"http://{undeclared}/x") == "refused: HTTP 403"
            await until(lambda: bool(_sandbox_rows(desktop)), 20, "the sandbox notice")
            [row] = _sandbox_rows(desktop)
            assert row.notice.server == "prying"
            assert undeclared in row.notice.text and str(path) in row.notice.text
            assert "trust review" not in row.notice.text  # a global server: no review
            assert row.action_button is not None
            assert row.action_button.text() == "Allow 127.0.0.3 for this server"
            # refused again: still one notice for this server
            assert await _fetch(desktop, f"http://{undeclared}/y") == "refused: HTTP 403"
            await asyncio.sleep(0.3)
            assert len(_sandbox_rows(desktop)) == 1
            QTest.mouseClick(row.action_button, Qt.MouseButton.LeftButton)
            await until(
                lambda: undeclared in path.read_text(encoding="utf-8"), 20, "the allow entry"
            )
            written = path.read_text(encoding="utf-8")
            allow = f'["{declared}", "{undeclared}"]'
            assert written == text.replace(f'["{declared}"]', allow), written
            await until(
                lambda: desktop.session.hub.connections.get("prying") not in (None, first),
                30,
                "the server restarted by the reload",
            )
            await until(
                lambda: desktop.session.hub.connection("prying").state.status.value == "Running",
                60,
                "prying runs again",
            )
            got = await _fetch(desktop, f"http://{undeclared}/z")
            assert got.startswith("ok: GET /z HTTP/1.1"), got
            assert not _sandbox_rows(desktop)  # a server that runs again takes its notices
        assert other.connections == ["127.0.0.3"]


def test_a_project_server_s_notice_says_its_trust_review_names_the_wider_access(
    tmp_path: Path,
) -> None:
    spec = spec_for("docs", scope=Scope.PROJECT, project=tmp_path, command="docs-server")
    refused = SandboxRefused("docs", "api.example.com", 443, "api.example.com:443", spec)
    text = sandbox_notice_text(refused)
    assert "refused docs a connection to api.example.com:443" in text
    assert str(spec.source.path) in text
    assert "next trust review names the wider access" in text
