"""Re-auth: a real OAuth server answering 401 parks in NeedsAuth; the window shows a
non-modal notice (and the tray a notification) whose Sign in… starts the sign-in."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from portico.runtime.events import Status
from portico.ui.actions import ActionId
from portico.ui.notices import NoticeRow
from tests.ui.pages_helpers import running_app, select, status_of, write_global
from tests.ui.qt_helpers import gone, until

pytestmark = pytest.mark.slow  # talks to real servers or processes


class _Unauthorized(BaseHTTPRequestHandler):
    """Every request: 401 with a Bearer challenge (an OAuth-protected MCP endpoint)."""

    def _deny(self) -> None:
        host, port = self.server.server_address[:2]  # type: ignore[misc]
        body = b'{"error": "invalid_token"}'
        self.send_response(401)
        self.send_header(
            "WWW-Authenticate",
            f'Bearer error="invalid_token", resource_metadata='
            f'"http://{host}:{port}/.well-known/oauth-protected-resource/mcp"',
        )
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self._deny()

    def do_GET(self) -> None:
        if self.path.startswith("/.well-known/"):
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self._deny()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def protected_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Unauthorized)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/mcp"
    finally:
        server.shutdown()
        server.server_close()


async def test_a_sign_in_notice_is_seen_and_usable_from_the_chats_place(
    protected_url: str,
) -> None:
    write_global(f'[mcp.linear]\nurl = "{protected_url}"\nauth = "oauth"\n')
    async with running_app() as desktop:
        await until(lambda: status_of(desktop, "linear") is Status.NEEDS_AUTH, 60, "NeedsAuth")
        window = desktop.window
        window.show_chats()
        # Qt shows a new row on a later pass of its loop: wait for a row a person can see
        row = await until(
            lambda: next(
                (r for r in window.notices.rows() if r.action_button and r.isVisible()), None
            ),
            10,
            "the sign-in notice, shown",
        )
        assert window.place == "Chats"
        assert row.action_button.isVisible()  # type: ignore[union-attr]
        assert "linear needs you to sign in" in row.label.text()
        assert len([r for r in window.notices.rows() if "linear" in r.label.text()]) == 1
        asked: list[tuple[str, str]] = []
        window.serverActionRequested.connect(lambda a, s: asked.append((a, s)))
        row.action_button.click()  # type: ignore[union-attr]
        assert asked == [(ActionId.SIGN_IN, "linear")]


async def test_needs_auth_shows_a_notice_whose_authorize_starts_the_sign_in(
    protected_url: str,
) -> None:
    write_global(f'[mcp.linear]\nurl = "{protected_url}"\nauth = "oauth"\n')
    async with running_app() as desktop:
        await until(lambda: status_of(desktop, "linear") is Status.NEEDS_AUTH, 60, "NeedsAuth")
        window = desktop.window

        def reauth_row() -> NoticeRow | None:
            # the newest row: a state change may replace the notice with an equal one
            return next(
                (
                    r
                    for r in window.notices.rows()
                    if "linear needs you to sign in before it can connect." in r.label.text()
                ),
                None,
            )

        await until(reauth_row, 10, "the re-auth notice")
        window.show_servers()  # the notices sit above the server list
        await until(lambda: (r := reauth_row()) is not None and r.isVisible(), 10, "it to show")
        row = reauth_row()
        assert row is not None
        assert row.action_button is not None and row.action_button.text() == "Sign in…"
        # the tray was told too (rate-limited per server: a second one is held back)
        assert not desktop.tray._limiter.allow("linear:auth")
        assert desktop.pages.last_auth_server == "linear"

        select(desktop, "linear")
        state = window.selected_state()
        assert dict(window.server_actions(state))["Sign in…"] is True  # type: ignore[arg-type]

        asked: list[tuple[str, str]] = []
        window.serverActionRequested.connect(lambda a, s: asked.append((a, s)))
        row.action_button.click()
        assert asked == [(ActionId.SIGN_IN, "linear")]
        # This endpoint has no authorization server: the sign-in ends with an error that
        # names the server (a real one would show the hand-off dialog instead).
        failed = await until(
            lambda: next(
                (
                    r
                    for r in window.notices.rows()
                    if r.label.text().startswith("Sign in to linear failed")
                ),
                None,
            ),
            60,
            "the sign-in outcome",
        )
        assert failed.notice.level == "error"


# --- the whole way: a real authorization server, the hand-off dialog, signed in, Running ---


@pytest.fixture
def oauth_peer(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """oidc-provider plus the protected MCP server (on its own loop in a thread);
    tokens go to an in-memory keyring like in the auth tests."""
    import asyncio

    import keyring

    from tests.helpers.keyrings import MemoryKeyring
    from tests.helpers.oauth import make_oidc, serve_protected

    monkeypatch.setenv("BROWSER", "true")  # "opening the browser" runs /bin/true
    previous = keyring.get_keyring()
    keyring.set_keyring(MemoryKeyring())
    oidc_iter = make_oidc()
    oidc = next(oidc_iter)
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    stop = asyncio.Event()
    started = threading.Event()

    async def serve() -> None:
        async with serve_protected(oidc):
            started.set()
            await stop.wait()

    done = asyncio.run_coroutine_threadsafe(serve(), loop)
    try:
        assert started.wait(20), "the protected server did not start"
        yield oidc.resource
    finally:
        loop.call_soon_threadsafe(stop.set)
        done.result(20)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()
        with contextlib.suppress(StopIteration):
            next(oidc_iter)
        keyring.set_keyring(previous)


async def test_reauth_notice_authorize_signs_in_through_the_hand_off_dialog(
    oauth_peer: str,
) -> None:
    from portico.ui.dialogs.oauth_dialog import OAuthDialog
    from tests.helpers.oauth import ScriptedBrowser

    write_global(f'[mcp.linear]\nurl = "{oauth_peer}"\nauth = "oauth"\n')
    async with running_app() as desktop:
        await until(lambda: status_of(desktop, "linear") is Status.NEEDS_AUTH, 60, "NeedsAuth")

        async def allow_private_issuer() -> None:
            # the test's authorization server is a private address on another port (as in
            # the auth tests); the app's default policy refuses such endpoints
            desktop.session.auth.endpoint_policy = None

        await desktop.runtime.submit(allow_private_issuer())
        window = desktop.window
        row = await until(
            lambda: next((r for r in window.notices.rows() if r.action_button), None),
            10,
            "the re-auth notice",
        )
        # the first sign-in is not "again", and the button and the text name one action
        assert row.label.text() == "linear needs you to sign in before it can connect."
        assert row.action_button.text() == "Sign in…"  # type: ignore[union-attr]
        assert "1 needs you" in window.summary_label.text()
        row.action_button.click()  # type: ignore[union-attr]
        dialog = await until(lambda: desktop.prompter.current, 60, "the hand-off dialog")  # type: ignore[union-attr]
        assert isinstance(dialog, OAuthDialog) and dialog.server == "linear"
        request = dialog.request
        # the person signs in in "their browser"; the redirect reaches the app's listener
        await ScriptedBrowser().run(request.authorize_url, request.redirect_uri, True)
        await until(lambda: status_of(desktop, "linear") is Status.RUNNING, 60, "signed in")
        assert gone(dialog)
        # signed in: the notices about it are gone, and the status bar says so at once
        await until(lambda: not window.notices.rows(), 10, "the notices to resolve")
        assert window.summary_label.text().startswith("1 server: 1 running")


async def test_a_browser_that_fails_to_open_makes_the_dialog_say_copy_the_link(
    oauth_peer: str, monkeypatch: pytest.MonkeyPatch, tmp_path: pytest.TempPathFactory
) -> None:
    """BROWSER names a command that fails and the system openers (xdg-open, gio) fail
    after starting: Python's webbrowser.open says True, the dialog must not believe it."""
    import os
    import stat
    import webbrowser
    from pathlib import Path

    from portico.ui.dialogs.oauth_dialog import OAuthDialog

    folder = Path(str(tmp_path)) / "openers"
    folder.mkdir()
    for opener in ("xdg-open", "gio"):
        script = folder / opener
        script.write_text("#!/bin/sh\nexit 3\n")
        script.chmod(script.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("BROWSER", "false")
    monkeypatch.setenv("DISPLAY", ":99")
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(webbrowser, "_tryorder", None)  # forget earlier lookups
    monkeypatch.setattr(webbrowser, "_browsers", {})
    write_global(f'[mcp.linear]\nurl = "{oauth_peer}"\nauth = "oauth"\n')
    async with running_app() as desktop:
        await until(lambda: status_of(desktop, "linear") is Status.NEEDS_AUTH, 60, "NeedsAuth")

        async def allow_private_issuer() -> None:
            desktop.session.auth.endpoint_policy = None

        await desktop.runtime.submit(allow_private_issuer())
        window = desktop.window
        row = await until(
            lambda: next((r for r in window.notices.rows() if r.action_button), None),
            10,
            "the sign-in notice",
        )
        row.action_button.click()  # type: ignore[union-attr]
        dialog = await until(lambda: desktop.prompter.current, 60, "the hand-off dialog")  # type: ignore[union-attr]
        assert isinstance(dialog, OAuthDialog)
        assert dialog.request.browser_opened is False
        assert "No browser could be opened here: copy the link" in dialog.intro.text()
        assert "sent to your browser" not in dialog.intro.text()
        dialog.cancel_button.click()
        assert gone(dialog) or await until(lambda: gone(dialog), 10, "the dialog to close")
