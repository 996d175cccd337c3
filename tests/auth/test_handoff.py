"""Paste-back shapes, wrong state, fixed ports and paths, redirect_host, redirect_uri,
time-outs, device-code login and an authorization server that changes."""

from __future__ import annotations

import json
from dataclasses import dataclass
from urllib.parse import parse_qs, urlparse

import httpx2
import pytest
from protected import ProtectedState

from portico.auth.errors import AuthError
from portico.auth.manager import DISCOVERY_MAX_AGE, AuthManager
from portico.auth.token_storage import PorticoTokenStorage
from portico.prompts import AuthorizeRequest
from tests.helpers.logs import AllowLogs
from tests.helpers.oauth import (
    Oidc,
    ScriptedPrompter,
    call_echo,
    free_port,
    server_spec,
    start_oidc,
    stop,
)

pytestmark = pytest.mark.slow  # talks to real servers or processes


@pytest.mark.parametrize("shape", ["url", "query", "bare"])
async def test_paste_back_shapes(oidc: Oidc, protected: ProtectedState, shape: str) -> None:
    prompter = ScriptedPrompter(mode="paste", paste_shape=shape)
    manager = AuthManager(prompter, endpoint_policy=None)
    spec = server_spec(f"paste-{shape}", oidc.resource)
    await manager.login(spec, browser=False)
    assert prompter.paste_checks == [None]
    assert await manager.has_token(spec)
    assert await call_echo(manager, spec) == "echo: hi"


async def test_paste_with_wrong_state_is_refused(
    oidc: Oidc, protected: ProtectedState, allow_logs: AllowLogs
) -> None:
    allow_logs(r"the pasted redirect is unusable: state does not match")
    prompter = ScriptedPrompter(mode="paste", paste_shape="url", tamper_state=1)
    manager = AuthManager(prompter, endpoint_policy=None)
    spec = server_spec("forged", oidc.resource)
    await manager.login(spec, browser=False)
    first, second = prompter.paste_checks
    assert first is not None and "state does not match" in first
    assert second is None
    assert len(prompter.requests) == 2  # asked again after the forged paste


async def test_fixed_port_and_path(oidc: Oidc, protected: ProtectedState) -> None:
    port = free_port()
    prompter = ScriptedPrompter(mode="browser")
    manager = AuthManager(prompter, endpoint_policy=None)
    spec = server_spec("fixed", oidc.resource, callback_port=port, callback_path="/cb")
    await manager.login(spec, browser=False)
    assert prompter.requests[0].redirect_uri == f"http://127.0.0.1:{port}/cb"
    assert await manager.has_token(spec)


async def test_redirect_host_localhost(oidc: Oidc, protected: ProtectedState) -> None:
    prompter = ScriptedPrompter(mode="browser")
    manager = AuthManager(prompter, endpoint_policy=None)
    spec = server_spec("waf", oidc.resource, callback_host="localhost")
    await manager.login(spec, browser=False)
    uri = prompter.requests[0].redirect_uri
    assert uri.startswith("http://localhost:") and uri.endswith("/mcp/oauth/callback")
    query = parse_qs(urlparse(prompter.requests[0].authorize_url).query)
    assert query["redirect_uri"] == [uri]
    assert await manager.has_token(spec)


@dataclass
class RelayPrompter(ScriptedPrompter):
    """The browser lands on a public HTTPS address that forwards to the listener."""

    listener_port: int = 0

    async def authorize(self, request: AuthorizeRequest) -> str | None:
        self.requests.append(request)
        final = await self.browser.run(request.authorize_url, request.redirect_uri, False)
        forwarded = f"http://127.0.0.1:{self.listener_port}/mcp/oauth/callback?"
        async with httpx2.AsyncClient() as http:
            page = await http.get(forwarded + urlparse(final).query)
        assert page.status_code == 200 and "signed in" in page.text
        import asyncio

        await asyncio.Event().wait()
        return None


async def test_redirect_uri_replaces_the_uri_sent(oidc: Oidc, protected: ProtectedState) -> None:
    port = free_port()
    prompter = RelayPrompter(listener_port=port)
    manager = AuthManager(prompter, endpoint_policy=None)
    public = "https://relay.example.net/callback"
    spec = server_spec("relayed", oidc.resource, callback_port=port, redirect_uri=public)
    await manager.login(spec, browser=False)
    request = prompter.requests[0]
    assert request.redirect_uri == public
    assert "redirect_uri=https%3A%2F%2Frelay.example.net%2Fcallback" in request.authorize_url
    assert await manager.has_token(spec)


async def test_login_timeout_names_both_knobs(oidc: Oidc, protected: ProtectedState) -> None:
    manager = AuthManager(ScriptedPrompter(mode="wait"), endpoint_policy=None)
    spec = server_spec("slow", oidc.resource, timeout=0.5)
    with pytest.raises(AuthError) as caught:
        await manager.login(spec, browser=False)
    text = str(caught.value)
    assert "Connecting to MCP server 'slow' timed out after 0.5s" in text
    assert "oauth.timeout" in text and "connect_timeout" in text
    assert not await manager.has_token(spec)


async def test_device_flow(oidc: Oidc, protected: ProtectedState) -> None:
    prompter = ScriptedPrompter()
    manager = AuthManager(prompter, endpoint_policy=None)
    spec = server_spec("device", oidc.resource)
    await manager.login(spec, flow="device")
    assert prompter.requests == []  # no browser hand-off, no listener
    (request,) = prompter.device_requests
    assert request.user_code and request.verification_uri.startswith(oidc.issuer)
    tokens = await manager.storage_for(spec).raw_tokens()
    assert tokens is not None and tokens.refresh_token
    assert await call_echo(manager, spec) == "echo: hi"


async def _expire_kept_discovery(storage: PorticoTokenStorage) -> None:
    record = json.loads(await storage.store.get_record(storage.key) or "{}")
    record["discovered"]["at"] -= DISCOVERY_MAX_AGE + 1
    await storage.store.set_record(storage.key, json.dumps(record))


async def test_issuer_change_drops_refresh_token(
    oidc: Oidc, protected: ProtectedState, allow_logs: AllowLogs
) -> None:
    """The resource names a new authorization server: a process that discovers it drops
    the refresh token (never sent there). A process within a day of the sign-in uses the
    discovery kept with the tokens and sends the token at once (issue 26, item 7): its
    refresh would go to the issuer that granted it, and only there."""
    allow_logs(r"the authorization server changed from .* the stored refresh token is dropped")
    manager = AuthManager(ScriptedPrompter(mode="cancel"), endpoint_policy=None)
    spec = server_spec("moving", oidc.resource)
    await AuthManager(ScriptedPrompter(), endpoint_policy=None).login(spec, browser=False)
    storage = manager.storage_for(spec)
    before = await storage.raw_tokens()
    assert before is not None and before.refresh_token

    # Same resource, a new authorization server.
    issuer2, process2 = start_oidc([oidc.resource])
    try:
        protected.authorization_server = issuer2
        protected.trusted_issuers.add(issuer2)
        served = protected.metadata_served
        assert await call_echo(manager, spec) == "echo: hi"  # the kept discovery: no lookup
        assert protected.metadata_served == served
        kept = await storage.raw_tokens()
        assert kept is not None and kept.refresh_token == before.refresh_token
        await _expire_kept_discovery(storage)  # a day later: discovered again
        assert await call_echo(manager, spec) == "echo: hi"  # the access token still works
        after = await storage.raw_tokens()
        assert after is not None
        assert after.access_token == before.access_token
        assert after.refresh_token is None  # never sent to the new issuer
        assert await storage.stored_issuer() == oidc.issuer
    finally:
        stop(process2)


async def test_scope_override_and_reauth_flag(oidc: Oidc, protected: ProtectedState) -> None:
    prompter = ScriptedPrompter(mode="browser")
    manager = AuthManager(prompter, endpoint_policy=None)
    spec = server_spec("scoped", oidc.resource, scope="mcp")
    await manager.login(spec, browser=False)
    await manager.login(spec)  # signing in again; BROWSER=true stands in for a browser
    first, second = prompter.requests
    assert parse_qs(urlparse(first.authorize_url).query)["scope"] == ["mcp"]
    assert not first.reauth and second.reauth
    assert not first.browser_opened and second.browser_opened
    assert await call_echo(manager, spec) == "echo: hi"


async def test_browser_lookup_does_not_block_the_loop(
    tmp_path: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """webbrowser's first lookup runs xdg-settings (here: a slow one); the loop keeps going."""
    import asyncio
    import shutil
    import stat
    import webbrowser
    from pathlib import Path

    from portico.auth.handoff import open_browser

    folder = Path(str(tmp_path))
    script = folder / "xdg-settings"
    script.write_text(f"#!/bin/sh\n{shutil.which('sleep')} 1.5\necho none.desktop\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    monkeypatch.delenv("BROWSER", raising=False)
    monkeypatch.setenv("DISPLAY", ":99")
    monkeypatch.setenv("PATH", str(folder))
    monkeypatch.setattr(webbrowser, "_tryorder", None)  # forget earlier lookups
    monkeypatch.setattr(webbrowser, "_browsers", {})
    ticks = 0

    async def heartbeat() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.05)
            ticks += 1

    beat = asyncio.create_task(heartbeat())
    try:
        opened = await open_browser("http://127.0.0.1:9/authorize")
    finally:
        beat.cancel()
    assert opened is False  # nothing runnable on this PATH
    assert ticks >= 5  # the loop ran while xdg-settings slept (0 when it blocked)


async def test_an_opener_that_fails_after_starting_is_not_an_opened_browser(
    tmp_path: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """webbrowser.open says True for a background opener that merely started (xdg-open);
    open_browser waits for its exit status."""
    import stat
    import webbrowser
    from pathlib import Path

    from portico.auth.handoff import open_browser

    folder = Path(str(tmp_path)) / "bin"
    folder.mkdir()
    script = folder / "xdg-open"
    script.write_text("#!/bin/sh\nexit 3\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("BROWSER", "false")
    monkeypatch.setenv("DISPLAY", ":99")
    monkeypatch.setenv("PATH", str(folder))
    monkeypatch.setattr(webbrowser, "_tryorder", None)
    monkeypatch.setattr(webbrowser, "_browsers", {})
    assert await open_browser("http://127.0.0.1:9/authorize") is False
    script.write_text("#!/bin/sh\nexit 0\n")
    assert await open_browser("http://127.0.0.1:9/authorize") is True
